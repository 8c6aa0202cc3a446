package source

import (
	"context"
	"fmt"
	"io"
	"iter"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Driver opens the buckets (containers) of one object-store scheme. Each object store has its
// own package (internal/source/s3, gcs, azure) that registers its Driver in init, so that only
// the binaries importing it link the store's SDK; internal/source/cloud imports them all.
// Everything around the store (allowlist, folder-or-file lookup, size limits, cache keys,
// watchdog, error kinds) is done here, the same for every store.
type Driver interface {
	// OpenBucket opens the bucket that u names: scheme://bucket, with the allowlist entry's
	// query options (endpoint, region, ...) when it has some. Keys are relative to the bucket.
	OpenBucket(ctx context.Context, u *url.URL) (Bucket, error)
	// ErrorKind classifies an error of OpenBucket or of a Bucket's methods: NotFound,
	// PermissionDenied, Invalid, or Unavailable for everything else (worth retrying).
	ErrorKind(err error) Kind
}

// Bucket is an opened bucket. Its methods are safe for concurrent use.
type Bucket interface {
	// Stat returns the attributes of the object at key.
	Stat(ctx context.Context, key string) (ObjectAttrs, error)
	// NewReader reads the object at key from its start; size is that of the version being read.
	NewReader(ctx context.Context, key string) (r io.ReadCloser, size int64, err error)
	// List yields the objects and "folders" (common prefixes, keys ending in "/") directly
	// under prefix, which is empty or ends in "/".
	List(ctx context.Context, prefix string) iter.Seq2[ListEntry, error]
	Close() error
}

// VersionReader is implemented by buckets that can read exactly the version a Stat described
// (GCS generations). Package source then reads through it, so that an object rewritten between
// Stat and read fails (Unavailable, worth a retry) instead of being read under the cache key of
// the version Stat saw; other buckets only catch a rewrite that changed the size.
type VersionReader interface {
	// NewVersionReader reads the version attrs (from Stat) describes, from its start.
	NewVersionReader(ctx context.Context, key string, attrs ObjectAttrs) (r io.ReadCloser, size int64, err error)
}

// ObjectAttrs describes one version of an object.
type ObjectAttrs struct {
	Size    int64
	ModTime time.Time
	// ETag names the version; empty when the store has none (ModTime then stands in for it).
	ETag string
}

// ListEntry is one result of Bucket.List.
type ListEntry struct {
	Key   string
	IsDir bool // a common prefix; Key ends in "/"
	// Size is the object's size; -1 when the store did not say (0 for a common prefix).
	Size int64
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// driverPackages names the package providing each object-store scheme this project has a
// driver for, for the error a binary without it gives.
var driverPackages = map[string]string{
	"s3":     "github.com/flinkpreflight/preflight/internal/source/s3",
	"gs":     "github.com/flinkpreflight/preflight/internal/source/gcs",
	"azblob": "github.com/flinkpreflight/preflight/internal/source/azure",
}

// Register makes an object-store scheme ("s3") available to every Opener created afterwards.
// It is meant for drivers' init functions and panics on a second registration of a scheme, on
// a nil driver, and on the schemes this package serves itself.
func Register(scheme string, d Driver) {
	scheme = strings.ToLower(scheme)
	if d == nil {
		panic("source: Register of a nil driver for " + scheme)
	}
	switch scheme {
	case "", "file", "http", "https":
		panic(fmt.Sprintf("source: Register(%q): the scheme is served by package source itself", scheme))
	}
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[scheme]; dup {
		panic("source: Register called twice for " + scheme)
	}
	drivers[scheme] = d
}

// Schemes lists the registered object-store schemes, sorted.
func Schemes() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	out := make([]string, 0, len(drivers))
	for s := range drivers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func driverFor(scheme string) (Driver, bool) {
	driversMu.RLock()
	defer driversMu.RUnlock()
	d, ok := drivers[strings.ToLower(scheme)]
	return d, ok
}

// unsupportedScheme explains a scheme without a driver: for a store this project supports, that
// this binary was built without its driver and which package provides it.
func unsupportedScheme(scheme string) string {
	if pkg, ok := driverPackages[strings.ToLower(scheme)]; ok {
		return fmt.Sprintf("this binary was built without the %s:// driver (%s; preflight and preflightd link every driver unless built with -tags preflight_nocloud)", strings.ToLower(scheme), pkg)
	}
	return fmt.Sprintf("unsupported scheme %q", scheme)
}
