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
	// RetryAfter is the hint attached to Unavailable errors; 0 means DefaultRetryAfter.
	RetryAfter time.Duration
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
	for _, entry := range cfg.Allow {
		if err := o.addRule(entry); err != nil {
			o.Close()
			return nil, fmt.Errorf("source: allow %q: %w", entry, err)
		}
	}
	o.http = cfg.HTTPClient
	if o.http == nil {
		o.http = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ResponseHeaderTimeout: 30 * time.Second,
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
	if hasDotDot(p) {
		return nil, newError(PermissionDenied, p, `".." is not allowed`, nil)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, newError(Invalid, p, "", err)
	}
	// The lexical check comes first so that nothing about paths outside the allowlist (not even
	// whether they exist) leaks to the caller.
	if o.matchLocal(abs, true) == nil {
		return nil, newError(PermissionDenied, abs, "outside the allowlist", nil)
	}
	resolved, err := o.resolve(abs)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, localError(abs, err)
	}
	if fi.IsDir() {
		abs = filepath.Join(abs, MetadataName)
		if resolved, err = o.resolve(abs); err != nil {
			return nil, err
		}
	}
	rule := o.matchLocal(resolved, false)
	var f *os.File
	if rule.root != nil {
		rel, err := filepath.Rel(rule.dir, resolved)
		if err != nil {
			return nil, newError(PermissionDenied, abs, "outside the allowlist", err)
		}
		// os.Root refuses any symlink leaving the folder, which closes the window between
		// resolving above and opening here.
		f, err = rule.root.Open(rel)
		if err != nil {
			return nil, localError(abs, err)
		}
	} else if f, err = os.Open(resolved); err != nil {
		return nil, localError(abs, err)
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, localError(abs, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, newError(NotFound, abs, "is a folder", nil)
	}
	if err := o.checkSize(abs, fi.Size()); err != nil {
		f.Close()
		return nil, err
	}
	return &Object{
		ReadCloser: o.limit(abs, f),
		URI:        "file://" + filepath.ToSlash(abs),
		Size:       fi.Size(),
		CacheKey:   fmt.Sprintf("file://%s|%d|%d", filepath.ToSlash(resolved), fi.Size(), fi.ModTime().UnixNano()),
	}, nil
}

// resolve follows symlinks and re-checks the result against the allowlist.
func (o *Opener) resolve(abs string) (string, error) {
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", localError(abs, err)
	}
	if o.matchLocal(resolved, false) == nil {
		return "", newError(PermissionDenied, abs, "resolves (through a symlink) outside the allowlist", nil)
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
		return nil, o.blobError(ctx, shown(key), err)
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
		attrs, err := b.Attributes(ctx, k)
		if gcerrors.Code(err) == gcerrors.NotFound {
			continue
		}
		if err != nil {
			return nil, o.blobError(ctx, shown(k), err)
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
			ReadCloser: o.limit(shown(k), &blobReader{b: b, key: k, size: attrs.Size, o: o, ctx: ctx, path: shown(k)}),
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
// read into Unavailable.
type blobReader struct {
	b    *blob.Bucket
	key  string
	size int64 // from Attributes: the version the cache key names
	r    *blob.Reader
	o    *Opener
	ctx  context.Context
	path string
}

func (b *blobReader) Read(p []byte) (int, error) {
	if b.r == nil {
		r, err := b.b.NewReader(b.ctx, b.key, nil)
		if err != nil {
			return 0, b.o.blobError(b.ctx, b.path, err)
		}
		b.r = r
		if r.Size() != b.size {
			// Rewritten since Attributes: the cache key would name the wrong version.
			return 0, &Error{Kind: Unavailable, Path: b.path, Msg: "object changed while being opened", RetryAfter: time.Second}
		}
	}
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = b.o.blobError(b.ctx, b.path, err)
	}
	return n, err
}

func (b *blobReader) Close() error {
	if b.r == nil {
		return nil
	}
	return b.r.Close()
}

func (o *Opener) blobError(ctx context.Context, p string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return newError(NotFound, p, "no such object or bucket", err)
	case gcerrors.PermissionDenied:
		return newError(PermissionDenied, p, "refused by the object store", err)
	case gcerrors.InvalidArgument:
		return newError(Invalid, p, "", err)
	}
	return &Error{Kind: Unavailable, Path: p, Msg: "object store unreachable", Err: err, RetryAfter: o.cfg.RetryAfter}
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
	for _, c := range candidates {
		shown := redact(&c)
		tried = append(tried, shown)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.String(), nil)
		if err != nil {
			return nil, newError(Invalid, shown, "", err)
		}
		resp, err := o.http.Do(req)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			var se *Error
			if errors.As(err, &se) {
				return nil, se // a redirect outside the allowlist
			}
			return nil, &Error{Kind: Unavailable, Path: shown, Msg: "server unreachable", Err: err, RetryAfter: o.cfg.RetryAfter}
		}
		switch {
		case resp.StatusCode == http.StatusOK && isListing(resp):
			resp.Body.Close()
			continue // a folder: try its _metadata
		case resp.StatusCode == http.StatusOK:
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			resp.Body.Close()
			continue
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			resp.Body.Close()
			return nil, newError(PermissionDenied, shown, resp.Status, nil)
		default:
			resp.Body.Close()
			retry := o.cfg.RetryAfter
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				retry = time.Duration(s) * time.Second
			}
			return nil, &Error{Kind: Unavailable, Path: shown, Msg: resp.Status, RetryAfter: retry}
		}
		if err := o.checkSize(shown, resp.ContentLength); err != nil {
			resp.Body.Close()
			return nil, err
		}
		var key string
		if v := resp.Header.Get("ETag") + resp.Header.Get("Last-Modified"); v != "" && resp.ContentLength >= 0 {
			key = fmt.Sprintf("%s|%d|%s", shown, resp.ContentLength, v)
		}
		return &Object{ReadCloser: o.limit(shown, resp.Body), URI: shown, Size: resp.ContentLength, CacheKey: key}, nil
	}
	return nil, newError(NotFound, strings.Join(tried, " nor "), "no such file", nil)
}

// isListing reports a response that is a folder, not a file: the server redirected to a path
// ending in "/" (as file servers do for folders) or answered with HTML. A _metadata is binary.
func isListing(resp *http.Response) bool {
	return strings.HasSuffix(resp.Request.URL.Path, "/") || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html")
}
