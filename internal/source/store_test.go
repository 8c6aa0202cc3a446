package source

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// dirDriver is a Driver over local folders, one folder per bucket under root: a store made of
// real files, without any SDK, to test the object-store backend (store.go) through the seam.
type dirDriver struct {
	root   string
	opened atomic.Int32
}

func (d *dirDriver) OpenBucket(_ context.Context, u *url.URL) (Bucket, error) {
	dir := filepath.Join(d.root, u.Host)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, &fs.PathError{Op: "open bucket", Path: u.Host, Err: fs.ErrNotExist}
	}
	d.opened.Add(1)
	return dirBucket(dir), nil
}

func (d *dirDriver) ErrorKind(err error) Kind {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NotFound
	case errors.Is(err, fs.ErrPermission):
		return PermissionDenied
	}
	return Unavailable
}

type dirBucket string

func (b dirBucket) path(key string) string { return filepath.Join(string(b), filepath.FromSlash(key)) }

func (b dirBucket) Stat(_ context.Context, key string) (ObjectAttrs, error) {
	fi, err := os.Stat(b.path(key))
	if err == nil && fi.IsDir() {
		err = fs.ErrNotExist // a store has objects, not folders
	}
	if err != nil {
		return ObjectAttrs{}, err
	}
	return ObjectAttrs{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

func (b dirBucket) NewReader(_ context.Context, key string) (io.ReadCloser, int64, error) {
	f, err := os.Open(b.path(key))
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

func (b dirBucket) List(_ context.Context, prefix string) iter.Seq2[ListEntry, error] {
	return func(yield func(ListEntry, error) bool) {
		entries, err := os.ReadDir(b.path(prefix))
		if err != nil {
			yield(ListEntry{}, err)
			return
		}
		for _, e := range entries {
			le := ListEntry{Key: prefix + e.Name()}
			if e.IsDir() {
				le.Key += "/"
				le.IsDir = true
			}
			if !yield(le, nil) {
				return
			}
		}
	}
}

func (b dirBucket) Close() error { return nil }

// registerForTest registers d for scheme until the test ends.
func registerForTest(t *testing.T, scheme string, d Driver) {
	t.Helper()
	Register(scheme, d)
	t.Cleanup(func() {
		driversMu.Lock()
		delete(drivers, scheme)
		driversMu.Unlock()
	})
}

// writeTree writes files (slash paths relative to root).
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		testutil.WriteFile(t, filepath.Join(root, filepath.FromSlash(name)), []byte(body))
	}
}

func TestOpenStored(t *testing.T) {
	d := &dirDriver{root: t.TempDir()}
	registerForTest(t, "dirstore", d)
	writeTree(t, d.root, map[string]string{
		"ckpts/flink/job-1/chk-5/_metadata": "from-store",
		"ckpts/flink/job-1/chk-6/_metadata": strings.Repeat("x", 100),
		"ckpts/other/_metadata":             "other",
		"other/_metadata":                   "other",
	})
	o := newOpener(t, Config{Allow: []string{"dirstore://ckpts/flink", "dirstore://gone"}, MaxBytes: 50})
	for _, tc := range []struct {
		name, uri, want string
		kind            Kind
	}{
		{"object", "dirstore://ckpts/flink/job-1/chk-5/_metadata", "from-store", 0},
		{"folder", "dirstore://ckpts/flink/job-1/chk-5", "from-store", 0},
		{"folder slash", "dirstore://ckpts/flink/job-1/chk-5/", "from-store", 0},
		{"scheme in capitals", "DIRSTORE://ckpts/flink/job-1/chk-5", "from-store", 0},
		{"missing", "dirstore://ckpts/flink/job-1/chk-7", "", NotFound},
		{"missing bucket", "dirstore://gone/chk-1", "", NotFound},
		{"too large", "dirstore://ckpts/flink/job-1/chk-6", "", TooLarge},
		{"outside the prefix", "dirstore://ckpts/other/_metadata", "", PermissionDenied},
		{"other bucket", "dirstore://other/_metadata", "", PermissionDenied},
		{"options chosen by the caller", "dirstore://ckpts/flink/job-1/chk-5?endpoint=x", "", PermissionDenied},
		{"dot-dot", "dirstore://ckpts/flink/../other/_metadata", "", PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := o.Open(context.Background(), tc.uri)
			if tc.kind != 0 {
				wantKind(t, err, tc.kind)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			body, err := io.ReadAll(obj)
			if err != nil || string(body) != tc.want || obj.URI != "dirstore://ckpts/flink/job-1/chk-5/_metadata" || obj.CacheKey == "" || obj.Size != int64(len(tc.want)) {
				t.Errorf("body %q (%v) URI %q key %q size %d", body, err, obj.URI, obj.CacheKey, obj.Size)
			}
		})
	}
	if n := d.opened.Load(); n != 1 {
		t.Errorf("bucket opened %d times, want once (kept by the Opener)", n)
	}

	t.Run("rewritten between open and read", func(t *testing.T) {
		obj, err := o.Open(context.Background(), "dirstore://ckpts/flink/job-1/chk-5")
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Close()
		if err := os.WriteFile(filepath.Join(d.root, "ckpts/flink/job-1/chk-5/_metadata"), []byte("rewritten, longer"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(obj); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want Unavailable (the cache key names the old version)", err)
		}
	})
}

func TestLatestStored(t *testing.T) {
	d := &dirDriver{root: t.TempDir()}
	registerForTest(t, "dirstore", d)
	writeTree(t, d.root, map[string]string{
		"ckpts/flink/job-1/chk-5/_metadata":        "five",
		"ckpts/flink/job-1/chk-12/_metadata":       "twelve",
		"ckpts/flink/job-1/chk-13/opaque-state":    "in progress",
		"ckpts/flink/job-1/shared/sst-1":           "x",
		"ckpts/flink/job-1/savepoint-ab/_metadata": "sp",
	})
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{"chk-5/_metadata", "savepoint-ab/_metadata"} {
		os.Chtimes(filepath.Join(d.root, "ckpts/flink/job-1", f), old, old)
	}
	o := newOpener(t, Config{Allow: []string{"dirstore://ckpts/flink"}})
	s, note, err := o.Latest(context.Background(), "dirstore://ckpts/flink/job-1")
	if err != nil {
		t.Fatal(err)
	}
	if s.URI != "dirstore://ckpts/flink/job-1/chk-12" || s.ID != 12 || !strings.Contains(note, "skipped incomplete chk-13") {
		t.Fatalf("%+v %q", s, note)
	}
	snaps, incomplete, err := o.Snapshots(context.Background(), "dirstore://ckpts/flink/job-1")
	if err != nil || len(snaps) != 3 || len(incomplete) != 1 {
		t.Fatalf("snapshots %+v incomplete %v err %v", snaps, incomplete, err)
	}
	if _, _, err := o.Latest(context.Background(), "dirstore://ckpts/elsewhere"); !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("outside the allowlist: %v", err)
	}
	s, _, err = o.Latest(context.Background(), "dirstore://ckpts/flink/job-1/chk-5")
	if err != nil || s.ID != 5 {
		t.Fatalf("a snapshot folder itself: %+v %v", s, err)
	}
}

// TestMissingDriver: a binary without a store's driver names the scheme and the package to import
// (this test binary links none: only the mains and their tests import internal/source/cloud).
func TestMissingDriver(t *testing.T) {
	if len(Schemes()) != 0 {
		t.Fatalf("package source's own tests must link no driver, have %v", Schemes())
	}
	_, err := New(Config{Allow: []string{"s3://ckpts/flink"}})
	if err == nil || !strings.Contains(err.Error(), "without the s3:// driver") || !strings.Contains(err.Error(), "internal/source/s3") {
		t.Errorf("New with s3 entry: %v", err)
	}
	_, err = New(Config{Allow: []string{"ftp://host/x"}})
	if err == nil || !strings.Contains(err.Error(), `unknown scheme "ftp"`) {
		t.Errorf("New with ftp entry: %v", err)
	}
	o := newOpener(t, Config{Allow: []string{t.TempDir()}})
	for uri, want := range map[string]string{
		"gs://bucket/chk-1/_metadata": "internal/source/gcs",
		"azblob://c/chk-1?endpoint=x": "internal/source/azure",
		"S3://ckpts/chk-1":            "internal/source/s3",
		"ftp://host/chk-1":            `unsupported scheme "ftp"`,
	} {
		_, err := o.Open(context.Background(), uri)
		var se *Error
		if !errors.As(err, &se) || se.Kind != Invalid || !strings.Contains(se.Public(), want) || strings.Contains(se.Public(), "endpoint=") {
			t.Errorf("Open(%s) = %v, want Invalid naming %s", uri, err, want)
		}
	}
	if _, _, err := o.Latest(context.Background(), "gs://bucket/job"); err == nil || !strings.Contains(err.Error(), "internal/source/gcs") {
		t.Errorf("Latest(gs://) = %v", err)
	}
}

func TestRegisterRefuses(t *testing.T) {
	registerForTest(t, "dirstore", &dirDriver{})
	for name, f := range map[string]func(){
		"twice":      func() { Register("DirStore", &dirDriver{}) },
		"http":       func() { Register("http", &dirDriver{}) },
		"file":       func() { Register("file", &dirDriver{}) },
		"nil driver": func() { Register("other", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
