// Package source opens the _metadata file a check reads: a local file or checkpoint folder, a
// file:// URI, an object in S3, GCS or Azure Blob Storage (through gocloud.dev/blob), or, when
// enabled, an http(s) URL. It owns the security boundary around those reads: an allowlist of URI
// prefixes that every request must fall inside (after normalisation and, for local paths, after
// resolving symlinks), a size limit, and typed errors (NotFound, PermissionDenied, TooLarge,
// Unavailable) the server maps to gRPC codes. It does not decode anything and keeps nothing in
// memory beyond open handles: the caller streams the returned reader into the decoder.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	// The object-store drivers the allowlist can name.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
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
	// may carry gocloud query options (endpoint, region, ...); requests then use the entry's
	// options, and a request that names options must name the same ones. Empty allows nothing.
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
	buckets map[*remoteRule]*blob.Bucket
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
}

// New validates the allowlist. Local entries must exist: a typo should stop the daemon, not
// silently refuse every request.
func New(cfg Config) (*Opener, error) {
	o := &Opener{cfg: cfg, buckets: map[*remoteRule]*blob.Bucket{}}
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
	case "s3", "gs", "azblob":
		r.prefix = strings.TrimPrefix(u.Path, "/")
	case "http", "https":
		r.prefix = u.Path
		if r.prefix == "" {
			r.prefix = "/"
		}
		if len(r.query) > 0 {
			return errors.New("http(s) entries take no query")
		}
	default:
		return fmt.Errorf("unknown scheme %q", u.Scheme)
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
	case "s3", "gs", "azblob":
		rule, err := o.matchRemote(u)
		if err != nil {
			return nil, err
		}
		return o.openBlob(ctx, u, rule)
	}
	return nil, newError(Invalid, "", fmt.Sprintf("unsupported scheme %q", scheme), nil)
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
		return nil, newError(PermissionDenied, shown, `".." is not allowed`, nil)
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
		if q := u.Query(); len(q) > 0 && !reflect.DeepEqual(q, r.query) {
			return nil, newError(PermissionDenied, shown, "query options differ from the allowlist entry's", nil)
		}
		return r, nil
	}
	return nil, newError(PermissionDenied, shown, "outside the allowlist", nil)
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

// matchLocal returns the rule containing p, comparing with each rule's resolved folder and, when
// lexical is set, also with the folder as written.
func (o *Opener) matchLocal(p string, lexical bool) *localRule {
	for _, r := range o.local {
		if within(p, r.dir, r.root != nil) || (lexical && within(p, r.lexical, r.root != nil)) {
			return r
		}
	}
	return nil
}

func within(p, base string, isDir bool) bool {
	if p == base {
		return true
	}
	if !isDir {
		return false
	}
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func (o *Opener) openLocal(p string) (*Object, error) {
	// Errors and reports show the path as the caller wrote it: a relative path made absolute
	// would reveal the daemon's working directory.
	shown := p
	if !filepath.IsAbs(p) {
		shown = filepath.ToSlash(filepath.Clean(p))
	}
	if hasDotDot(p) {
		return nil, newError(PermissionDenied, shown, `".." is not allowed`, nil)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, newError(Invalid, shown, "", err)
	}
	// The lexical check comes first so that nothing about paths outside the allowlist (not even
	// whether they exist) leaks to the caller.
	if o.matchLocal(abs, true) == nil {
		return nil, newError(PermissionDenied, shown, "outside the allowlist", nil)
	}
	resolved, err := o.resolve(abs, shown)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, localError(shown, err)
	}
	if fi.IsDir() {
		abs = filepath.Join(abs, MetadataName)
		shown = path.Join(shown, MetadataName)
		if resolved, err = o.resolve(abs, shown); err != nil {
			return nil, err
		}
	}
	rule := o.matchLocal(resolved, false)
	var f *os.File
	if rule.root != nil {
		rel, err := filepath.Rel(rule.dir, resolved)
		if err != nil {
			return nil, newError(PermissionDenied, shown, "outside the allowlist", err)
		}
		// os.Root refuses any symlink leaving the folder, which closes the window between
		// resolving above and opening here.
		f, err = rule.root.Open(rel)
		if err != nil {
			return nil, localError(shown, err)
		}
	} else if f, err = os.Open(resolved); err != nil {
		return nil, localError(shown, err)
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, localError(shown, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, newError(NotFound, shown, "is a folder", nil)
	}
	if err := o.checkSize(shown, fi.Size()); err != nil {
		f.Close()
		return nil, err
	}
	uri := shown
	if filepath.IsAbs(p) {
		uri = "file://" + filepath.ToSlash(abs)
	}
	return &Object{
		ReadCloser: o.limit(shown, f),
		URI:        uri,
		Size:       fi.Size(),
		CacheKey:   fmt.Sprintf("file://%s|%d|%d", filepath.ToSlash(resolved), fi.Size(), fi.ModTime().UnixNano()),
	}, nil
}

// resolve follows symlinks and re-checks the result against the allowlist.
func (o *Opener) resolve(abs, shown string) (string, error) {
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", localError(shown, err)
	}
	if o.matchLocal(resolved, false) == nil {
		return "", newError(PermissionDenied, shown, "resolves (through a symlink) outside the allowlist", nil)
	}
	return resolved, nil
}

func localError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newError(NotFound, p, "no such file", nil)
	case errors.Is(err, fs.ErrPermission):
		return newError(PermissionDenied, p, "not readable by the server", err)
	}
	// What is left is mostly os.Root refusing an escape; refusing is the safe answer.
	return newError(PermissionDenied, p, "cannot open", err)
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

func (o *Opener) bucket(ctx context.Context, r *remoteRule) (*blob.Bucket, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if b, ok := o.buckets[r]; ok {
		return b, nil
	}
	open := r.scheme + "://" + r.host
	if len(r.query) > 0 {
		open += "?" + r.query.Encode()
	}
	b, err := blob.OpenBucket(ctx, open)
	if err != nil {
		return nil, err
	}
	o.buckets[r] = b
	return b, nil
}

func (o *Opener) openBlob(ctx context.Context, u *url.URL, rule *remoteRule) (*Object, error) {
	key := strings.TrimPrefix(u.Path, "/")
	shown := func(k string) string { return rule.scheme + "://" + u.Host + "/" + k }
	b, err := o.bucket(ctx, rule)
	if err != nil {
		return nil, o.blobError(ctx, nil, u.Host, shown(key), err)
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
		attrs, err := b.Attributes(w.ctx, k)
		w.stop()
		if gcerrors.Code(err) == gcerrors.NotFound {
			continue
		}
		if err != nil {
			return nil, o.blobError(ctx, w, u.Host, shown(k), err)
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
			ReadCloser: o.limit(shown(k), &blobReader{b: b, key: k, size: attrs.Size, o: o, ctx: ctx, host: u.Host, path: shown(k)}),
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

// blobReader opens the object at the first Read and turns transport failures in the middle of a
// read, and a store that stops sending, into Unavailable.
type blobReader struct {
	b    *blob.Bucket
	key  string
	size int64 // from Attributes: the version the cache key names
	r    io.ReadCloser
	o    *Opener
	ctx  context.Context
	host string
	path string
}

func (b *blobReader) Read(p []byte) (int, error) {
	if b.r == nil {
		w := b.o.watch(b.ctx)
		r, err := b.b.NewReader(w.ctx, b.key, nil)
		if err != nil {
			w.stop()
			return 0, b.o.blobError(b.ctx, w, b.host, b.path, err)
		}
		w.progress()
		b.r = &watchedBody{rc: r, w: w, host: b.host, shown: b.path, wrap: func(err error) error { return b.o.blobError(b.ctx, w, b.host, b.path, err) }}
		if r.Size() != b.size {
			// Rewritten since Attributes: the cache key would name the wrong version.
			return 0, &Error{Kind: Unavailable, Path: b.path, Msg: "object changed while being opened", RetryAfter: time.Second}
		}
	}
	return b.r.Read(p)
}

func (b *blobReader) Close() error {
	if b.r == nil {
		return nil
	}
	return b.r.Close()
}

func (o *Opener) blobError(ctx context.Context, w *watchdog, host, p string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if w != nil {
		if f := w.fault(host, p); f != nil {
			return f
		}
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return newError(NotFound, p, "no such object or bucket", err)
	case gcerrors.PermissionDenied:
		return newError(PermissionDenied, p, "refused by the object store", err)
	case gcerrors.InvalidArgument:
		return newError(Invalid, p, "", err)
	}
	return &Error{Kind: Unavailable, Path: p, Msg: fmt.Sprintf("object store %s unreachable", host), Err: err, RetryAfter: o.cfg.RetryAfter}
}

func (o *Opener) openHTTP(ctx context.Context, u *url.URL, _ *remoteRule) (*Object, error) {
	base := *u
	var candidates []url.URL
	switch {
	case strings.HasSuffix(base.Path, "/"):
		base.Path += MetadataName
		candidates = []url.URL{base}
	case path.Base(base.Path) == MetadataName:
		candidates = []url.URL{base}
	default:
		folder := base
		folder.Path += "/" + MetadataName
		candidates = []url.URL{base, folder}
	}
	var tried []string
	var waited time.Duration // on Retry-After hints, over all candidates
	for _, c := range candidates {
		shown := redact(&c)
		tried = append(tried, shown)
		obj, found, err := o.getHTTP(ctx, &c, shown, &waited)
		if err != nil || found {
			return obj, err
		}
	}
	return nil, newError(NotFound, strings.Join(tried, " nor "), "no such file", nil)
}

// getHTTP GETs one candidate URL: the object, not found (false, nil), or an error. An upstream
// that is busy (429, 503) with a Retry-After is asked again after that delay when the wait fits
// in MaxRetryWait and before the caller's deadline; otherwise its hint, clamped, is passed on.
func (o *Opener) getHTTP(ctx context.Context, c *url.URL, shown string, waited *time.Duration) (*Object, bool, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.String(), nil)
		if err != nil {
			return nil, false, newError(Invalid, shown, "", err)
		}
		w := o.watch(ctx)
		resp, err := o.http.Do(req.WithContext(w.ctx))
		if err != nil {
			w.stop()
			if f := w.fault(c.Host, shown); f != nil {
				return nil, false, f
			}
			var se *Error
			if errors.As(err, &se) {
				return nil, false, se // a redirect outside the allowlist
			}
			return nil, false, &Error{Kind: Unavailable, Path: shown, Msg: fmt.Sprintf("upstream %s unreachable: %s", c.Host, describe(err)), Err: err, RetryAfter: o.cfg.RetryAfter}
		}
		switch {
		case resp.StatusCode == http.StatusOK && isListing(resp):
			resp.Body.Close()
			w.stop()
			return nil, false, nil // a folder: try its _metadata
		case resp.StatusCode == http.StatusOK:
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			resp.Body.Close()
			w.stop()
			return nil, false, nil
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			resp.Body.Close()
			w.stop()
			return nil, false, newError(PermissionDenied, shown, resp.Status, nil)
		default:
			resp.Body.Close()
			w.stop()
			retry, hinted := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			if !hinted {
				retry = o.cfg.RetryAfter
			}
			busy := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
			if busy && hinted && attempt < maxRetries && o.canWait(ctx, retry, *waited) {
				t := time.NewTimer(retry)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, false, ctx.Err()
				}
				*waited += retry
				continue
			}
			return nil, false, &Error{Kind: Unavailable, Path: shown, Msg: fmt.Sprintf("upstream %s answered %s", c.Host, resp.Status), RetryAfter: retry}
		}
		if err := o.checkSize(shown, resp.ContentLength); err != nil {
			resp.Body.Close()
			w.stop()
			return nil, false, err
		}
		var key string
		if v := resp.Header.Get("ETag") + resp.Header.Get("Last-Modified"); v != "" && resp.ContentLength >= 0 {
			key = fmt.Sprintf("%s|%d|%s", shown, resp.ContentLength, v)
		}
		w.progress()
		host := c.Host
		body := &watchedBody{rc: resp.Body, w: w, host: host, shown: shown, wrap: func(err error) error {
			return &Error{Kind: Unavailable, Path: shown, Msg: fmt.Sprintf("upstream %s broke off: %s", host, describe(err)), Err: err, RetryAfter: o.cfg.RetryAfter}
		}}
		return &Object{ReadCloser: o.limit(shown, body), URI: shown, Size: resp.ContentLength, CacheKey: key}, true, nil
	}
}

// canWait reports whether waiting d more (after waited) stays within MaxRetryWait and ends
// before the caller's deadline, keeping room to fetch afterwards.
func (o *Opener) canWait(ctx context.Context, d, waited time.Duration) bool {
	if waited+d > MaxRetryWait {
		return false
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		return d < left-deadlineReserve(left)-d/2
	}
	return true
}

// isListing reports a response that is a folder, not a file: the server redirected to a path
// ending in "/" (as file servers do for folders) or answered with HTML. A _metadata is binary.
func isListing(resp *http.Response) bool {
	return strings.HasSuffix(resp.Request.URL.Path, "/") || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html")
}
