// Package source opens the _metadata file a check reads: a local file or checkpoint folder, a
// file:// URI, an object in a store whose driver the binary links (S3, GCS, Azure Blob Storage:
// see Driver and internal/source/cloud), or, when enabled, an http(s) URL. It owns the security
// boundary around those reads: an allowlist of URI prefixes that every request must fall inside
// (after normalisation and, for local paths, after resolving symlinks), a size limit, and typed
// errors (NotFound, PermissionDenied, TooLarge, Unavailable) the server maps to gRPC codes. It
// does not decode anything and keeps nothing in memory beyond open handles: the caller streams
// the returned reader into the decoder.
//
// One file per backend: local.go, http.go, and store.go for every object store through its
// registered Driver. The stores' SDKs live in the drivers' own packages, so that a program
// importing this package (or the decoder, the simulation, the engine) links none of them.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// MetadataName is the file Flink writes at the root of every checkpoint and savepoint folder.
const MetadataName = "_metadata"

// DefaultRetryAfter is the retry hint of Unavailable errors when Config.RetryAfter is zero.
const DefaultRetryAfter = 5 * time.Second

// Config configures an Opener.
type Config struct {
	// Allow lists the URI prefixes that may be read: local folders or files ("/data/ckpt",
	// "file:///data/ckpt"), buckets with an optional key prefix ("s3://bucket/flink/",
	// "gs://bucket", "azblob://container/jobs"), and http(s) URL prefixes. Object-store entries
	// may carry their driver's query options (endpoint, region, ...); requests then use the
	// entry's options, and a request that names options must name the same ones. An
	// object-store entry needs its scheme's driver registered (see Driver). Empty allows nothing.
	Allow []string
	// EnableHTTP allows http:// and https:// sources (still subject to Allow).
	EnableHTTP bool
	// MaxBytes bounds the size of a _metadata file; 0 means no limit.
	MaxBytes int64
	// HTTPClient fetches http(s) sources; nil uses a client with a 30 s header timeout.
	HTTPClient *http.Client
	// RetryAfter is the hint attached to Unavailable errors; 0 means DefaultRetryAfter. Every
	// hint is clamped to MaxRetryAfter.
	RetryAfter time.Duration
	// UpstreamTimeout bounds waiting for an upstream to answer or to send more bytes; 0 means
	// DefaultUpstreamTimeout. Upstreams are also given up shortly before the caller's deadline,
	// so that the caller learns which host failed (Unavailable) rather than its own deadline.
	UpstreamTimeout time.Duration
}

// Object is an opened _metadata file. Close it.
type Object struct {
	io.ReadCloser // yields at most the configured MaxBytes, then a TooLarge *Error
	// URI is the location actually read, always ending in _metadata, without query options.
	URI string
	// Size in bytes; -1 when unknown (an HTTP response without Content-Length).
	Size int64
	// CacheKey identifies this version of the file: location plus size plus mtime or ETag. It
	// is empty when the store gives no way to tell versions apart; do not cache then.
	CacheKey string
}

// Opener opens sources inside its allowlist. It is safe for concurrent use.
type Opener struct {
	cfg    Config
	local  []*localRule
	remote []*remoteRule
	http   *http.Client

	mu      sync.Mutex
	buckets map[*remoteRule]Bucket
}

type localRule struct {
	lexical string   // the entry as written, made absolute and cleaned
	dir     string   // the entry with symlinks resolved
	root    *os.Root // for folder entries: opening through it refuses symlink escapes
}

type remoteRule struct {
	scheme, host string
	prefix       string // bucket key prefix (no leading slash), or URL path for http(s)
	query        url.Values
	driver       Driver // nil for http(s)
}

// New validates the allowlist. Local entries must exist: a typo should stop the daemon, not
// silently refuse every request.
func New(cfg Config) (*Opener, error) {
	o := &Opener{cfg: cfg, buckets: map[*remoteRule]Bucket{}}
	if o.cfg.RetryAfter == 0 {
		o.cfg.RetryAfter = DefaultRetryAfter
	}
	o.cfg.RetryAfter = clampRetry(o.cfg.RetryAfter)
	if o.cfg.UpstreamTimeout <= 0 {
		o.cfg.UpstreamTimeout = DefaultUpstreamTimeout
	}
	for _, entry := range cfg.Allow {
		if err := o.addRule(entry); err != nil {
			o.Close()
			return nil, fmt.Errorf("source: allow %q: %w", entry, err)
		}
	}
	o.http = cfg.HTTPClient
	if o.http == nil {
		o.http = &http.Client{Transport: &http.Transport{
			Proxy: http.ProxyFromEnvironment,
			// Waiting for headers and body bytes is bounded by the watchdog (upstream.go).
			TLSHandshakeTimeout: 10 * time.Second,
		}}
	}
	// A redirect must land inside the allowlist too, or an allowed server could point us anywhere.
	client := *o.http
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		if _, err := o.matchRemote(req.URL); err != nil {
			return err
		}
		return nil
	}
	o.http = &client
	return o, nil
}

func (o *Opener) addRule(entry string) error {
	entry = CanonicalFileURI(entry)
	scheme, _, hasScheme := strings.Cut(entry, "://")
	if !hasScheme || strings.EqualFold(scheme, "file") {
		p := entry
		if hasScheme {
			u, err := url.Parse(entry)
			if err != nil {
				return err
			}
			if u.Host != "" && u.Host != "localhost" {
				return errors.New("file URIs name no host")
			}
			p = u.Path
		}
		if hasDotDot(p) {
			return errors.New(`".." is not allowed`)
		}
		lexical, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		dir, err := filepath.EvalSymlinks(lexical)
		if err != nil {
			return err
		}
		r := &localRule{lexical: lexical, dir: dir}
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if r.root, err = os.OpenRoot(dir); err != nil {
				return err
			}
		}
		o.local = append(o.local, r)
		return nil
	}
	u, err := url.Parse(entry)
	if err != nil {
		return err
	}
	r := &remoteRule{scheme: strings.ToLower(u.Scheme), host: u.Host, query: u.Query()}
	switch r.scheme {
	case "http", "https":
		r.prefix = u.Path
		if r.prefix == "" {
			r.prefix = "/"
		}
		if len(r.query) > 0 {
			return errors.New("http(s) entries take no query")
		}
	default:
		d, ok := driverFor(r.scheme)
		if _, known := driverPackages[r.scheme]; !ok && known {
			return errors.New(unsupportedScheme(u.Scheme))
		} else if !ok {
			return fmt.Errorf("unknown scheme %q", u.Scheme)
		}
		r.driver = d
		r.prefix = strings.TrimPrefix(u.Path, "/")
	}
	if r.host == "" {
		return errors.New("no bucket or host")
	}
	if hasDotDot(u.Path) {
		return errors.New(`".." is not allowed`)
	}
	o.remote = append(o.remote, r)
	return nil
}

// Close releases buckets and folder handles.
func (o *Opener) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	var errs []error
	for r, b := range o.buckets {
		errs = append(errs, b.Close())
		delete(o.buckets, r)
	}
	for _, r := range o.local {
		if r.root != nil {
			errs = append(errs, r.root.Close())
			r.root = nil
		}
	}
	return errors.Join(errs...)
}

// Open opens the _metadata named by uri: the file itself, or the _metadata inside the folder (or
// key prefix) it names.
func (o *Opener) Open(ctx context.Context, uri string) (*Object, error) {
	if uri == "" {
		return nil, newError(Invalid, "", "empty URI", nil)
	}
	uri = CanonicalFileURI(uri)
	scheme, _, hasScheme := strings.Cut(uri, "://")
	if !hasScheme {
		return o.openLocal(uri)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, newError(Invalid, "", "cannot parse URI", err)
	}
	if u.Fragment != "" || u.User != nil {
		return nil, newError(Invalid, "", "URI must not carry a fragment or user info", nil)
	}
	switch strings.ToLower(scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, newError(Invalid, "", "file URIs name no host", nil)
		}
		if u.RawQuery != "" {
			return nil, newError(Invalid, "", "file URIs take no query", nil)
		}
		return o.openLocal(u.Path)
	case "http", "https":
		if !o.cfg.EnableHTTP {
			return nil, newError(PermissionDenied, redact(u), "http(s) sources are disabled on this server", nil)
		}
		rule, err := o.matchRemote(u)
		if err != nil {
			return nil, err
		}
		return o.openHTTP(ctx, u, rule)
	}
	if _, ok := driverFor(scheme); !ok {
		return nil, newError(Invalid, redact(u), unsupportedScheme(scheme), nil)
	}
	rule, err := o.matchRemote(u)
	if err != nil {
		return nil, err
	}
	return o.openStored(ctx, u, rule)
}

// hasDotDot reports a ".." path segment, in either separator. Such a path is refused outright:
// lexical cleaning would hide it from the allowlist check while a store or a symlink could still
// interpret it differently.
func hasDotDot(p string) bool {
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

// redact drops the query (it may name endpoints) from a URI shown in errors.
func redact(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	c.User = nil
	return c.String()
}

func (o *Opener) matchRemote(u *url.URL) (*remoteRule, error) {
	shown := redact(u)
	if hasDotDot(u.Path) || hasDotDot(u.RawPath) {
		return nil, newError(PermissionDenied, shown, msgDotDot, nil)
	}
	scheme := strings.ToLower(u.Scheme)
	for _, r := range o.remote {
		web := scheme == "http" || scheme == "https"
		// Host names are case-insensitive; bucket and container names are case-sensitive.
		if r.scheme != scheme || (web && !strings.EqualFold(r.host, u.Host)) || (!web && r.host != u.Host) {
			continue
		}
		p := u.Path
		if !web {
			p = strings.TrimPrefix(p, "/")
		}
		if !underPrefix(p, r.prefix) {
			continue
		}
		if q := u.Query(); len(q) > 0 && !maps.EqualFunc(q, r.query, slices.Equal[[]string]) {
			return nil, newError(PermissionDenied, shown, "query options differ from the allowlist entry's", nil)
		}
		return r, nil
	}
	return nil, newError(PermissionDenied, shown, msgOutside, nil)
}

// underPrefix reports whether p is prefix or lies below it, on a segment boundary: prefix
// "flink/jobs" admits "flink/jobs/a" but not "flink/jobs-old/a".
func underPrefix(p, prefix string) bool {
	if prefix == "" || p == prefix || strings.TrimSuffix(p, "/") == strings.TrimSuffix(prefix, "/") {
		return true
	}
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(p, prefix)
	}
	return strings.HasPrefix(p, prefix+"/")
}

func (o *Opener) checkSize(p string, size int64) error {
	if o.cfg.MaxBytes > 0 && size > o.cfg.MaxBytes {
		return &Error{Kind: TooLarge, Path: p, Msg: fmt.Sprintf("%d bytes, limit %d", size, o.cfg.MaxBytes)}
	}
	return nil
}

// limit enforces MaxBytes while reading too: a file may grow after its size was checked, and
// HTTP responses may not announce a size at all.
func (o *Opener) limit(p string, rc io.ReadCloser) io.ReadCloser {
	if o.cfg.MaxBytes <= 0 {
		return rc
	}
	return &limitedReader{rc: rc, left: o.cfg.MaxBytes, path: p, max: o.cfg.MaxBytes}
}

type limitedReader struct {
	rc   io.ReadCloser
	left int64
	path string
	max  int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One probe byte tells "exactly at the limit" from "over it".
		var one [1]byte
		if n, _ := l.rc.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &Error{Kind: TooLarge, Path: l.path, Msg: fmt.Sprintf("more than %d bytes", l.max)}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.rc.Read(p)
	l.left -= int64(n)
	return n, err
}

func (l *limitedReader) Close() error { return l.rc.Close() }
