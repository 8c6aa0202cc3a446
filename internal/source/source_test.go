package source

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree builds:
//
//	allowed/chk-1/_metadata           "checkpoint-1"
//	allowed/chk-2/_metadata -> ../chk-1/_metadata   (symlink inside the allowlist)
//	allowed/escape-file -> ../secret/_metadata      (symlink out)
//	allowed/escape-dir -> ../secret                 (folder symlink out)
//	allowed/chk-3/_metadata -> ../../secret/_metadata (the _metadata itself escapes)
//	allowed/big/_metadata             65 bytes
//	allowed-other/_metadata           shares the prefix string, not the folder
//	secret/_metadata                  "secret"
//	link-to-allowed -> allowed        (an allowed folder reached through a symlink)
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"allowed/chk-1/_metadata":  "checkpoint-1",
		"allowed/big/_metadata":    strings.Repeat("x", 65),
		"allowed-other/_metadata":  "other",
		"secret/_metadata":         "secret",
		"allowed/empty-dir/.keep":  "",
		"allowed/chk-3/.keep":      "",
		"allowed/exact/_metadata":  "exact",
		"allowed/exact/_metadata2": "exact2",
	}
	writeTree(t, dir, files)
	links := map[string]string{
		"allowed/chk-2/_metadata": "../chk-1/_metadata",
		"allowed/escape-file":     "../secret/_metadata",
		"allowed/escape-dir":      "../secret",
		"allowed/chk-3/_metadata": "../../secret/_metadata",
		"link-to-allowed":         "allowed",
	}
	for name, target := range links {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// newOpener is New(cfg) for a test: an error fails it, and the opener is closed when it ends.
func newOpener(t *testing.T, cfg Config) *Opener {
	t.Helper()
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func TestOpenLocal(t *testing.T) {
	dir := tree(t)
	o := newOpener(t, Config{Allow: []string{filepath.Join(dir, "allowed"), "file:" + filepath.Join(dir, "allowed-other", "_metadata")}, MaxBytes: 64})
	for _, tc := range []struct {
		name string
		uri  string
		want string // body, when no error
		kind Kind
	}{
		{"file", filepath.Join(dir, "allowed/chk-1/_metadata"), "checkpoint-1", 0},
		{"folder", filepath.Join(dir, "allowed/chk-1"), "checkpoint-1", 0},
		{"file URI", "file://" + filepath.Join(dir, "allowed/chk-1"), "checkpoint-1", 0},
		{"file URI localhost", "file://localhost" + filepath.Join(dir, "allowed/chk-1"), "checkpoint-1", 0},
		{"Flink's file:/ pointer", "file:" + filepath.Join(dir, "allowed/chk-1"), "checkpoint-1", 0},
		{"Flink's file:/ pointer, upper case", "FILE:" + filepath.Join(dir, "allowed/chk-1/_metadata"), "checkpoint-1", 0},
		{"Flink's file:/ pointer outside", "file:/etc/passwd", "", PermissionDenied},
		{"redundant separators", dir + "//allowed/./chk-1/", "checkpoint-1", 0},
		{"symlink inside", filepath.Join(dir, "allowed/chk-2"), "checkpoint-1", 0},
		{"allowed file entry", filepath.Join(dir, "allowed-other/_metadata"), "other", 0},
		{"allowed file entry's folder", filepath.Join(dir, "allowed-other"), "", PermissionDenied},
		{"outside", filepath.Join(dir, "secret/_metadata"), "", PermissionDenied},
		{"outside, missing: no existence leak", filepath.Join(dir, "nope/_metadata"), "", PermissionDenied},
		{"system file", "file:///etc/passwd", "", PermissionDenied},
		{"dot-dot escape", filepath.Join(dir, "allowed") + "/../secret/_metadata", "", PermissionDenied},
		{"dot-dot staying inside", filepath.Join(dir, "allowed") + "/chk-1/../chk-1", "", PermissionDenied},
		{"encoded dot-dot", "file://" + filepath.Join(dir, "allowed") + "/%2e%2e/secret", "", PermissionDenied},
		{"prefix string is not a folder", filepath.Join(dir, "allowed-other"), "", PermissionDenied},
		{"symlinked file escapes", filepath.Join(dir, "allowed/escape-file"), "", PermissionDenied},
		{"symlinked folder escapes", filepath.Join(dir, "allowed/escape-dir"), "", PermissionDenied},
		{"_metadata symlink escapes", filepath.Join(dir, "allowed/chk-3"), "", PermissionDenied},
		{"allowed folder through a symlink", filepath.Join(dir, "link-to-allowed/chk-1"), "", PermissionDenied},
		{"missing file", filepath.Join(dir, "allowed/chk-9/_metadata"), "", NotFound},
		{"folder without _metadata", filepath.Join(dir, "allowed/empty-dir"), "", NotFound},
		{"too large", filepath.Join(dir, "allowed/big"), "", TooLarge},
		{"file URI with host", "file://example.com" + filepath.Join(dir, "allowed/chk-1"), "", Invalid},
		{"unknown scheme", "ftp://x/y", "", Invalid},
		{"empty", "", "", Invalid},
		{"http disabled", "http://127.0.0.1/x", "", PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := o.Open(context.Background(), tc.uri)
			if tc.kind != 0 {
				wantKind(t, err, tc.kind)
				if obj != nil {
					t.Fatal("object with error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tc.uri, err)
			}
			defer obj.Close()
			body, err := io.ReadAll(obj)
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tc.want || obj.Size != int64(len(tc.want)) {
				t.Errorf("body %q size %d, want %q", body, obj.Size, tc.want)
			}
			if !strings.HasSuffix(obj.URI, "/_metadata") || obj.CacheKey == "" {
				t.Errorf("URI %q cache key %q", obj.URI, obj.CacheKey)
			}
		})
	}
}

// TestFilePath: the local path of plain paths and of every local URI form; remote URIs and file
// URIs with a host are not local.
func TestFilePath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		local    bool
	}{
		{"/data/chk-1", "/data/chk-1", true},
		{"chk-1/_metadata", "chk-1/_metadata", true},
		{"file:///data/chk-1", "/data/chk-1", true},
		{"file://localhost/data/chk-1", "/data/chk-1", true},
		{"file:/data/savepoint-1a2b3c", "/data/savepoint-1a2b3c", true},
		{"File:/data/x", "/data/x", true},
		{"file:relative", "file:relative", true}, // a plain (odd) path, as before
		{"./odd.name://x", "./odd.name://x", true},
		{"file://host/data", "", false},
		{"s3://bucket/chk-1", "", false},
		{"gs://bucket/chk-1", "", false},
	} {
		got, local := FilePath(tc.in)
		if got != tc.want || local != tc.local {
			t.Errorf("FilePath(%q) = %q, %v; want %q, %v", tc.in, got, local, tc.want, tc.local)
		}
	}
}

func TestNotFoundNamesThePath(t *testing.T) {
	dir := tree(t)
	o := newOpener(t, Config{Allow: []string{dir}})
	_, err := o.Open(context.Background(), filepath.Join(dir, "allowed/empty-dir"))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), filepath.Join(dir, "allowed/empty-dir/_metadata")) {
		t.Fatalf("err = %v, want NotFound naming the _metadata path", err)
	}
}

func TestCacheKeyChangesWithContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "_metadata")
	os.WriteFile(p, []byte("one"), 0o644)
	o := newOpener(t, Config{Allow: []string{dir}})
	key := func() string {
		obj, err := o.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		obj.Close()
		return obj.CacheKey
	}
	k1, k2 := key(), key()
	os.WriteFile(p, []byte("three"), 0o644)
	if k3 := key(); k1 != k2 || k1 == k3 {
		t.Errorf("keys %q %q %q: want stable, then changed", k1, k2, k3)
	}
}

// TestLimitWhileReading covers a file that grows after Open checked its size.
func TestLimitWhileReading(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "_metadata")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	o := newOpener(t, Config{Allow: []string{dir}, MaxBytes: 10})
	obj, err := o.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("grown"))
	f.Close()
	if _, err := io.ReadAll(obj); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want TooLarge", err)
	}
}

func TestNewRejectsBadEntries(t *testing.T) {
	for _, entry := range []string{
		filepath.Join(t.TempDir(), "missing"),
		"ftp://host/x",
		"s3://",
		"s3://b/../c",
		"http://host/x?y=1",
		"file://host/x",
	} {
		if o, err := New(Config{Allow: []string{entry}}); err == nil {
			o.Close()
			t.Errorf("New(%q) accepted", entry)
		}
	}
}

func TestOpenHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ckpt/chk-1/_metadata", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		io.WriteString(w, "over-http")
	})
	mux.HandleFunc("/ckpt/forbidden/_metadata", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	mux.HandleFunc("/ckpt/busy/_metadata", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/ckpt/redirect-out/_metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/private/_metadata", http.StatusFound)
	})
	mux.HandleFunc("/ckpt/big/_metadata", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the limit must be enforced while reading.
		w.(http.Flusher).Flush()
		io.WriteString(w, strings.Repeat("x", 100))
	})
	mux.HandleFunc("/ckpt/listed", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ckpt/listed/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/ckpt/listed/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ckpt/listed/_metadata" {
			w.Header().Set("Last-Modified", "Mon, 30 Nov 2026 05:00:00 GMT")
			io.WriteString(w, "over-http")
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<pre><a href=\"_metadata\">_metadata</a></pre>")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	o := newOpener(t, Config{Allow: []string{srv.URL + "/ckpt"}, EnableHTTP: true, MaxBytes: 50})
	for _, tc := range []struct {
		name, path, want string
		kind             Kind
	}{
		{"file", "/ckpt/chk-1/_metadata", "over-http", 0},
		{"folder", "/ckpt/chk-1", "over-http", 0},
		{"folder slash", "/ckpt/chk-1/", "over-http", 0},
		{"folder listed by a file server", "/ckpt/listed", "over-http", 0},
		{"missing", "/ckpt/chk-2", "", NotFound},
		{"forbidden", "/ckpt/forbidden", "", PermissionDenied},
		{"unavailable", "/ckpt/busy", "", Unavailable},
		{"redirect outside the allowlist", "/ckpt/redirect-out", "", PermissionDenied},
		{"outside", "/private/_metadata", "", PermissionDenied},
		{"prefix string only", "/ckpt-other/_metadata", "", PermissionDenied},
		{"dot-dot", "/ckpt/../private/_metadata", "", PermissionDenied},
		{"big without length", "/ckpt/big", "", TooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := o.Open(context.Background(), srv.URL+tc.path)
			if err == nil {
				defer obj.Close()
				var body []byte
				body, err = io.ReadAll(obj)
				if err == nil && tc.kind == 0 {
					if string(body) != tc.want || obj.CacheKey == "" {
						t.Errorf("body %q key %q", body, obj.CacheKey)
					}
					return
				}
			}
			se := wantKind(t, err, tc.kind)
			if tc.kind == Unavailable && se.RetryAfter.Seconds() != 7 {
				t.Errorf("retry after %v, want 7s from the header", se.RetryAfter)
			}
		})
	}
}

// TestMatchRemote covers the allowlist for every object-store scheme without a store: matching
// happens before any bucket is opened.
func TestMatchRemote(t *testing.T) {
	for _, scheme := range []string{"s3", "gs", "azblob"} {
		registerForTest(t, scheme, &dirDriver{root: t.TempDir()})
	}
	o := newOpener(t, Config{Allow: []string{
		"s3://ckpts/flink?region=eu-west-1",
		"gs://gcs-ckpts",
		"azblob://container/jobs/",
	}})
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"s3://ckpts/flink/job/chk-1", true},
		{"s3://ckpts/flink", true},
		{"s3://ckpts/flink?region=eu-west-1", true},
		{"s3://ckpts/flink?region=us-east-1", false},
		{"s3://ckpts/flinkx/job", false},
		{"s3://ckpts/", false},
		{"S3://ckpts/flink/job", true},  // schemes are case-insensitive
		{"s3://CKPTS/flink/job", false}, // bucket names are not
		{"s3://other/flink/job", false},
		{"gs://gcs-ckpts/anything/chk-1", true},
		{"gs://gcs-ckpts-2/chk-1", false},
		{"azblob://container/jobs/a/chk-1", true},
		{"azblob://container/jobsx/a", false},
		{"azblob://container/jobs/../x", false},
	} {
		u, err := url.Parse(tc.uri)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.matchRemote(u); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want allowed=%v", tc.uri, err, tc.ok)
		}
	}
}

// wantKind fails the test unless err is an *Error of that kind, and returns it.
func wantKind(t *testing.T, err error, kind Kind) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) || se.Kind != kind {
		t.Fatalf("err = %v, want kind %v", err, kind)
	}
	return se
}
