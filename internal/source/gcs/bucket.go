package gcs

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/flinkpreflight/preflight/internal/source"
)

// Bounds on one exchange. Waiting for an answer or for body bytes of Stat and NewReader is bounded
// by package source's watchdog (its UpstreamTimeout); List is bounded here, per page.
const (
	// listPageTimeout bounds one page of a listing (request and body).
	listPageTimeout = 60 * time.Second
	// maxListPageBytes bounds the JSON of one listing page: 1,000 names of at most 1,024 bytes
	// each, escaped, fit well below it.
	maxListPageBytes = 16 << 20
	// maxMetadataBytes bounds the JSON of one object's metadata (asked for a few fields only).
	maxMetadataBytes = 1 << 20
	// maxErrorBytes bounds the error body read for its message.
	maxErrorBytes = 16 << 10
	// maxMessageBytes bounds the store's message quoted in an error.
	maxMessageBytes = 200
	// attempts is how often an idempotent request is tried on 429, 5xx or a transport failure,
	// as Google's retry strategy advises (exponential backoff with jitter).
	attempts = 3
)

// firstBackoff is the mean wait before the second attempt; it doubles for each further attempt.
var firstBackoff = 250 * time.Millisecond

// newTransport is the transport of one bucket, below authentication. It sets no overall timeout:
// reading a large object may take long as long as bytes flow, which package source's watchdog
// checks.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		ExpectContinueTimeout: time.Second,
		// An object stored gzip-compressed would otherwise be decompressed by the transport
		// without a size to check; GCS only transcodes when asked for gzip.
		DisableCompression: true,
	}
}

// newClient sends requests through rt without following redirects: the JSON API does not
// redirect, and a token must not follow one to another host.
func newClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// tokenHTTPClient fetches OAuth tokens (token endpoint, metadata server): bounded in total.
var tokenHTTPClient = &http.Client{Timeout: 30 * time.Second}

// withTokenClient is the context credentials keep for refreshing tokens: it must outlive the
// request that opened the bucket, and use a client with a timeout.
func withTokenClient(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, tokenHTTPClient)
}

// bucket is one bucket over the JSON API. It is safe for concurrent use.
type bucket struct {
	name      string
	base      *url.URL // endpoint, without /storage/v1
	transport *http.Transport
	http      *http.Client // through transport, with the credentials unless anonymous
	pageSize  int          // maxResults of a listing page; 0 leaves it to the server (1,000)
	identity  string       // who the requests are sent as, where known (source.Identifier)
}

// Identity names the identity the bucket reads as (source.Identifier).
func (b *bucket) Identity(context.Context) string { return b.identity }

// objectURL is the JSON API URL of an object (or, with key "", of the bucket's object list).
func (b *bucket) objectURL(key string, q url.Values) string {
	p := b.base.EscapedPath() + "/storage/v1/b/" + url.PathEscape(b.name) + "/o"
	if key != "" {
		// Object names go in one path segment: "/" is escaped too.
		p += "/" + url.PathEscape(key)
	}
	return b.base.Scheme + "://" + b.base.Host + p + "?" + q.Encode()
}

// shown is how errors name an object: gs://bucket/key.
func (b *bucket) shown(key string) string { return "gs://" + b.name + "/" + key }

// objectMetadata is the part of the JSON API's object resource the driver reads. GCS sends
// int64 fields as JSON strings.
type objectMetadata struct {
	Name            string `json:"name"`
	Size            string `json:"size"`
	Generation      string `json:"generation"`
	Updated         string `json:"updated"`
	ETag            string `json:"etag"`
	ContentEncoding string `json:"contentEncoding"`
}

// Stat reads the object's metadata: size, update time and, as the version, its generation
// (which changes with the content only, not with a metadata update as the etag does, and which
// NewVersionReader pins).
func (b *bucket) Stat(ctx context.Context, key string) (source.ObjectAttrs, error) {
	q := url.Values{"fields": {"name,size,generation,updated,etag,contentEncoding"}}
	resp, err := b.get(ctx, "stat", key, b.objectURL(key, q))
	if err != nil {
		return source.ObjectAttrs{}, err
	}
	defer resp.Body.Close()
	attrs, err := parseObjectMetadata(resp.Body)
	if err != nil {
		return source.ObjectAttrs{}, &HTTPError{Op: "stat", Object: b.shown(key), Status: resp.StatusCode, Msg: err.Error()}
	}
	return attrs, nil
}

// parseObjectMetadata reads an object resource (JSON, at most maxMetadataBytes).
func parseObjectMetadata(r io.Reader) (source.ObjectAttrs, error) {
	var m objectMetadata
	if err := decodeJSON(r, maxMetadataBytes, &m); err != nil {
		return source.ObjectAttrs{}, fmt.Errorf("unreadable metadata: %w", err)
	}
	size, err := strconv.ParseInt(m.Size, 10, 64)
	if err != nil || size < 0 {
		return source.ObjectAttrs{}, fmt.Errorf("metadata without a valid size (%q)", m.Size)
	}
	var mod time.Time
	if m.Updated != "" {
		if mod, err = time.Parse(time.RFC3339Nano, m.Updated); err != nil {
			return source.ObjectAttrs{}, fmt.Errorf("metadata with an invalid update time (%q)", m.Updated)
		}
	}
	version := m.Generation
	if version == "" {
		version = m.ETag
	}
	return source.ObjectAttrs{Size: size, ModTime: mod, ETag: version}, nil
}

// NewReader downloads the live version of the object in one request (alt=media). The size is
// that of the version the response carries (X-Goog-Stored-Content-Length, else Content-Length).
// The body is checked against the CRC32C GCS sends (X-Goog-Hash) when it ends.
func (b *bucket) NewReader(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	return b.read(ctx, key, "")
}

// NewVersionReader downloads the generation Stat returned (as the ETag), so that a rewrite since
// then is a 404 (NotFound) rather than other bytes under the old version's name. Attributes that
// name no generation read the live version.
func (b *bucket) NewVersionReader(ctx context.Context, key string, attrs source.ObjectAttrs) (io.ReadCloser, int64, error) {
	gen := attrs.ETag
	if _, err := strconv.ParseUint(gen, 10, 64); err != nil {
		gen = ""
	}
	return b.read(ctx, key, gen)
}

var _ source.VersionReader = (*bucket)(nil)

func (b *bucket) read(ctx context.Context, key, generation string) (io.ReadCloser, int64, error) {
	q := url.Values{"alt": {"media"}}
	if generation != "" {
		q.Set("generation", generation)
	}
	resp, err := b.get(ctx, "read", key, b.objectURL(key, q))
	if err != nil {
		return nil, 0, err
	}
	fail := func(msg string) (io.ReadCloser, int64, error) {
		resp.Body.Close()
		return nil, 0, &EncodingError{Object: b.shown(key), Msg: msg}
	}
	if enc := resp.Header.Get("X-Goog-Stored-Content-Encoding"); enc != "" && enc != "identity" {
		return fail(fmt.Sprintf("stored with Content-Encoding %q: store _metadata uncompressed", enc))
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		return fail(fmt.Sprintf("served with Content-Encoding %q", enc))
	}
	size := resp.ContentLength
	if v := resp.Header.Get("X-Goog-Stored-Content-Length"); v != "" {
		stored, err := strconv.ParseInt(v, 10, 64)
		if err != nil || stored < 0 || (size >= 0 && stored != size) {
			resp.Body.Close()
			return nil, 0, &HTTPError{Op: "read", Object: b.shown(key), Status: resp.StatusCode, Msg: fmt.Sprintf("X-Goog-Stored-Content-Length %q does not match Content-Length %d", v, size)}
		}
		size = stored
	}
	r := &mediaReader{body: resp.Body, shown: b.shown(key), left: size}
	if want, ok := crc32cOf(resp.Header); ok {
		r.crc, r.want = crc32.New(castagnoli), want
	}
	return r, size, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32cOf reads the crc32c of an X-Goog-Hash header ("crc32c=<base64>,md5=<base64>", possibly
// as several headers).
func crc32cOf(h http.Header) (uint32, bool) {
	for _, v := range h.Values("X-Goog-Hash") {
		for part := range strings.SplitSeq(v, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok || name != "crc32c" {
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(val)
			if err != nil || len(raw) != 4 {
				return 0, false
			}
			return binary.BigEndian.Uint32(raw), true
		}
	}
	return 0, false
}

// mediaReader is an object's body: it fails a body shorter than announced and one whose CRC32C
// differs from the store's.
type mediaReader struct {
	body  io.ReadCloser
	shown string
	left  int64 // bytes still announced; -1 when no length was given
	crc   hash.Hash32
	want  uint32
}

func (r *mediaReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if r.crc != nil {
		r.crc.Write(p[:n])
	}
	if r.left >= 0 {
		r.left -= int64(n)
	}
	if err == io.EOF {
		switch {
		case r.left > 0:
			return n, fmt.Errorf("gcs: read %s: %w (%d bytes missing)", r.shown, io.ErrUnexpectedEOF, r.left)
		case r.crc != nil && r.crc.Sum32() != r.want:
			return n, &ChecksumError{Object: r.shown, Got: r.crc.Sum32(), Want: r.want}
		}
	}
	return n, err
}

func (r *mediaReader) Close() error { return r.body.Close() }

// EncodingError is an object stored compressed (Content-Encoding: gzip): GCS would serve it
// decompressed, of a size no metadata announces. A _metadata is never stored that way by Flink.
type EncodingError struct{ Object, Msg string }

func (e *EncodingError) Error() string { return "gcs: read " + e.Object + ": " + e.Msg }

// ChecksumError is a body whose CRC32C differs from the one the store announced: corrupted in
// transit (worth another try).
type ChecksumError struct {
	Object    string
	Got, Want uint32
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("gcs: read %s: CRC32C %08x, the store announced %08x", e.Object, e.Got, e.Want)
}

// listPage is the part of the JSON API's objects.list answer the driver reads.
type listPage struct {
	Items []struct {
		Name string `json:"name"`
		Size string `json:"size"` // int64 as a JSON string
	} `json:"items"`
	Prefixes      []string `json:"prefixes"`
	NextPageToken string   `json:"nextPageToken"`
}

// List yields the objects and common prefixes directly under prefix ("/" as the delimiter), page
// by page; it stops at the first error or when ctx ends between pages.
func (b *bucket) List(ctx context.Context, prefix string) iter.Seq2[source.ListEntry, error] {
	return func(yield func(source.ListEntry, error) bool) {
		token := ""
		lastPrefix := "" // prefixes come in lexicographic order: a repeated one is skipped
		for {
			if err := ctx.Err(); err != nil {
				yield(source.ListEntry{}, err)
				return
			}
			page, err := b.listPage(ctx, prefix, token)
			if err != nil {
				yield(source.ListEntry{}, err)
				return
			}
			for _, it := range page.Items {
				size, err := strconv.ParseInt(it.Size, 10, 64)
				if err != nil {
					size = -1
				}
				if !yield(source.ListEntry{Key: it.Name, Size: size}, nil) {
					return
				}
			}
			for _, p := range page.Prefixes {
				// GCS pages items and prefixes together, in order; some emulators send every
				// prefix again on each page of items.
				if p <= lastPrefix {
					continue
				}
				lastPrefix = p
				if !yield(source.ListEntry{Key: p, IsDir: true}, nil) {
					return
				}
			}
			if page.NextPageToken == "" {
				return
			}
			if page.NextPageToken == token {
				yield(source.ListEntry{}, &HTTPError{Op: "list", Object: b.shown(prefix), Status: http.StatusOK, Msg: "the store repeated its page token"})
				return
			}
			token = page.NextPageToken
		}
	}
}

func (b *bucket) listPage(ctx context.Context, prefix, token string) (*listPage, error) {
	ctx, cancel := context.WithTimeout(ctx, listPageTimeout)
	defer cancel()
	q := url.Values{"delimiter": {"/"}, "fields": {"items(name,size),prefixes,nextPageToken"}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if token != "" {
		q.Set("pageToken", token)
	}
	if b.pageSize > 0 {
		q.Set("maxResults", strconv.Itoa(b.pageSize))
	}
	resp, err := b.get(ctx, "list", prefix, b.objectURL("", q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	page, err := parseListPage(resp.Body)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, &HTTPError{Op: "list", Object: b.shown(prefix), Status: resp.StatusCode, Msg: err.Error()}
	}
	return page, nil
}

// parseListPage reads one objects.list answer (JSON, at most maxListPageBytes).
func parseListPage(r io.Reader) (*listPage, error) {
	var page listPage
	if err := decodeJSON(r, maxListPageBytes, &page); err != nil {
		return nil, fmt.Errorf("unreadable listing: %w", err)
	}
	return &page, nil
}

func (b *bucket) Close() error {
	b.transport.CloseIdleConnections()
	return nil
}

// get sends a GET under ctx and returns a 2xx response, or an *HTTPError (the store answered
// something else) or a transport error wrapped in one. Requests that failed with 429, 5xx or in
// transport are tried again after a jittered exponential backoff, within ctx.
func (b *bucket) get(ctx context.Context, op, key, rawURL string) (*http.Response, error) {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		resp, err := b.getOnce(ctx, op, key, rawURL)
		if err == nil || attempt == attempts || !retryable(err) || ctx.Err() != nil {
			return resp, err
		}
		wait := backoff/2 + rand.N(backoff)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, err
		}
		backoff *= 2
	}
}

func (b *bucket) getOnce(ctx context.Context, op, key, rawURL string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &OptionError{Msg: "cannot build the request URL: " + err.Error()}
	}
	resp, err := b.http.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		// *url.Error names the URL: endpoint, bucket and object, never the token (a header).
		return nil, &HTTPError{Op: op, Object: b.shown(key), Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, &HTTPError{Op: op, Object: b.shown(key), Status: resp.StatusCode, Msg: errorMessage(resp.Body)}
}

// retryable: the store was busy or failing, or the exchange broke; not a refusal nor a context's
// end, nor credentials the token endpoint refused.
func retryable(err error) bool {
	var he *HTTPError
	if !errors.As(err, &he) {
		return false
	}
	if he.Status == 0 {
		var re *oauth2.RetrieveError
		return !errors.As(he.Err, &re) || re.Response == nil || re.Response.StatusCode >= 500
	}
	return he.Status == http.StatusTooManyRequests || he.Status == http.StatusRequestTimeout || he.Status >= 500
}

// errorMessage extracts the message of a JSON API error body ({"error":{"message":...}}), or the
// start of a non-JSON one, read within maxErrorBytes.
func errorMessage(body io.Reader) string {
	raw, _ := io.ReadAll(io.LimitReader(body, maxErrorBytes))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal(raw, &e) == nil {
		msg = e.Error.Message
	} else {
		msg = string(raw)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxMessageBytes {
		msg = strings.ToValidUTF8(msg[:maxMessageBytes], "") + "…"
	}
	return msg
}

// decodeJSON decodes a body of at most limit bytes.
func decodeJSON(r io.Reader, limit int64, v any) error {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	if err := json.NewDecoder(lr).Decode(v); err != nil {
		if lr.N <= 0 {
			return fmt.Errorf("more than %d bytes", limit)
		}
		return err
	}
	return nil
}

// HTTPError is a request the store refused or that failed in transport (Status 0, Err set). It
// names the object (gs://bucket/key) and the status, and never a credential.
type HTTPError struct {
	Op     string // stat, read, list
	Object string // gs://bucket/key (the prefix for list)
	Status int    // HTTP status; 0 for a transport failure
	Msg    string // the store's message
	Err    error  // the transport failure
}

func (e *HTTPError) Error() string {
	s := "gcs: " + e.Op + " " + e.Object + ": "
	if e.Status == 0 {
		return s + e.Err.Error()
	}
	s += "HTTP " + strconv.Itoa(e.Status)
	if t := http.StatusText(e.Status); t != "" {
		s += " " + t
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

func (e *HTTPError) Unwrap() error { return e.Err }
