package source

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// Object stores (s3, gs, azblob, ...) through a registered Driver (driver.go). The store itself
// is the driver's; which keys may be read, how a checkpoint folder maps to its _metadata, the
// size limit, cache keys, the watchdog and the error kinds are the same for every store, here.

func (o *Opener) bucket(ctx context.Context, r *remoteRule) (Bucket, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if b, ok := o.buckets[r]; ok {
		return b, nil
	}
	u := &url.URL{Scheme: r.scheme, Host: r.host}
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	b, err := r.driver.OpenBucket(ctx, u)
	if err != nil {
		return nil, err
	}
	o.buckets[r] = b
	return b, nil
}

func (o *Opener) openStored(ctx context.Context, u *url.URL, rule *remoteRule) (*Object, error) {
	key := strings.TrimPrefix(u.Path, "/")
	shown := func(k string) string { return rule.scheme + "://" + u.Host + "/" + k }
	b, err := o.bucket(ctx, rule)
	if err != nil {
		return nil, o.storeError(ctx, rule, nil, u.Host, shown(key), err)
	}
	// A key may name the file or the checkpoint "folder" (a key prefix); try the file first.
	var candidates []string
	switch {
	case key == "" || strings.HasSuffix(key, "/"):
		candidates = []string{key + MetadataName}
	case path.Base(key) == MetadataName:
		candidates = []string{key}
	default:
		candidates = []string{key, key + "/" + MetadataName}
	}
	for _, k := range candidates {
		w := o.watch(ctx)
		attrs, err := b.Stat(w.ctx, k)
		w.stop()
		if err != nil && rule.driver.ErrorKind(err) == NotFound {
			continue
		}
		if err != nil {
			return nil, o.storeError(ctx, rule, w, u.Host, shown(k), err)
		}
		if err := o.checkSize(shown(k), attrs.Size); err != nil {
			return nil, err
		}
		version := attrs.ETag
		if version == "" {
			version = strconv.FormatInt(attrs.ModTime.UnixNano(), 10)
		}
		// The GET starts at the first Read: a caller that finds the key in its cache closes the
		// object without downloading anything.
		return &Object{
			ReadCloser: o.limit(shown(k), &storedReader{b: b, rule: rule, key: k, attrs: attrs, o: o, ctx: ctx, host: u.Host, path: shown(k)}),
			URI:        shown(k),
			Size:       attrs.Size,
			CacheKey:   fmt.Sprintf("%s|%d|%s", shown(k), attrs.Size, version),
		}, nil
	}
	return nil, newError(NotFound, strings.Join(mapStrings(candidates, shown), " nor "), "no such object", nil)
}

func mapStrings(s []string, f func(string) string) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = f(s[i])
	}
	return out
}

// storedReader opens the object at the first Read and turns transport failures in the middle of
// a read, and a store that stops sending, into Unavailable.
type storedReader struct {
	b     Bucket
	rule  *remoteRule
	key   string
	attrs ObjectAttrs // from Stat: the version the cache key names
	r     *watchedBody
	o     *Opener
	ctx   context.Context
	host  string
	path  string
}

func (s *storedReader) Read(p []byte) (int, error) {
	if s.r == nil {
		w := s.o.watch(s.ctx)
		var r io.ReadCloser
		var size int64
		var err error
		vr, pinned := s.b.(VersionReader)
		if pinned {
			r, size, err = vr.NewVersionReader(w.ctx, s.key, s.attrs)
		} else {
			r, size, err = s.b.NewReader(w.ctx, s.key)
		}
		if err != nil {
			w.stop()
			if pinned && s.ctx.Err() == nil && s.rule.driver.ErrorKind(err) == NotFound {
				// The version Stat saw is gone: replaced or deleted since.
				return 0, &Error{Kind: Unavailable, Path: s.path, Msg: "object changed while being opened", Err: err, RetryAfter: time.Second}
			}
			return 0, s.o.storeError(s.ctx, s.rule, w, s.host, s.path, err)
		}
		w.progress()
		s.r = &watchedBody{rc: r, w: w, host: s.host, shown: s.path, wrap: func(err error) error { return s.o.storeError(s.ctx, s.rule, w, s.host, s.path, err) }}
		if size != s.attrs.Size {
			// Rewritten since Stat: the cache key would name the wrong version.
			return 0, &Error{Kind: Unavailable, Path: s.path, Msg: "object changed while being opened", RetryAfter: time.Second}
		}
	}
	return s.r.Read(p)
}

func (s *storedReader) Close() error {
	if s.r == nil {
		return nil
	}
	return s.r.Close()
}

func (o *Opener) storeError(ctx context.Context, rule *remoteRule, w *watchdog, host, p string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if w != nil {
		if f := w.fault(host, p); f != nil {
			return f
		}
	}
	switch rule.driver.ErrorKind(err) {
	case NotFound:
		return newError(NotFound, p, "no such object or bucket", err)
	case PermissionDenied:
		return newError(PermissionDenied, p, "refused by the object store", err)
	case Invalid:
		return newError(Invalid, p, "", err)
	}
	return &Error{Kind: Unavailable, Path: p, Msg: fmt.Sprintf("object store %s unreachable", host), Err: err, RetryAfter: o.cfg.RetryAfter}
}

// maxListed bounds the entries a folder listing reads.
const maxListed = 10000

// listStored lists the snapshot folders directly under a job's checkpoint folder in a store.
func (o *Opener) listStored(ctx context.Context, u *url.URL) ([]Snapshot, []string, error) {
	rule, err := o.matchRemote(u)
	if err != nil {
		return nil, nil, err
	}
	shown := func(k string) string { return rule.scheme + "://" + u.Host + "/" + k }
	b, err := o.bucket(ctx, rule)
	if err != nil {
		return nil, nil, o.storeError(ctx, rule, nil, u.Host, shown(""), err)
	}
	prefix := strings.TrimPrefix(u.Path, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if attrs, err := b.Stat(ctx, prefix+MetadataName); err == nil {
		kind, id, _ := snapshotName(path.Base(strings.TrimSuffix(prefix, "/")))
		if kind == "" {
			kind = "checkpoint"
		}
		return []Snapshot{{URI: shown(strings.TrimSuffix(prefix, "/")), Kind: kind, ID: id, ModTime: attrs.ModTime}}, nil, nil
	}
	var snaps []Snapshot
	var incomplete []string
	n := 0
	for obj, err := range b.List(ctx, prefix) {
		if cerr := ctx.Err(); cerr != nil {
			return nil, nil, cerr
		}
		if err != nil {
			return nil, nil, o.storeError(ctx, rule, nil, u.Host, shown(prefix), err)
		}
		if n++; n > maxListed {
			return nil, nil, newError(Invalid, shown(prefix), fmt.Sprintf("more than %d entries: name a job's checkpoint folder", maxListed), nil)
		}
		if !obj.IsDir {
			continue
		}
		name := path.Base(strings.TrimSuffix(obj.Key, "/"))
		kind, id, ok := snapshotName(name)
		if !ok {
			continue
		}
		attrs, err := b.Stat(ctx, obj.Key+MetadataName)
		if err != nil && rule.driver.ErrorKind(err) == NotFound {
			incomplete = append(incomplete, name)
			continue
		}
		if err != nil {
			return nil, nil, o.storeError(ctx, rule, nil, u.Host, shown(obj.Key+MetadataName), err)
		}
		snaps = append(snaps, Snapshot{URI: shown(strings.TrimSuffix(obj.Key, "/")), Kind: kind, ID: id, ModTime: attrs.ModTime})
	}
	return snaps, incomplete, nil
}
