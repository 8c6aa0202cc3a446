package gcs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/flinkpreflight/preflight/internal/source"
)

// The driver against a real GCS JSON API server on loopback (fake-gcs-server's fakestorage, in
// process), reached through a front server that counts requests, checks credentials and
// injects the failures the fake cannot produce.

func init() { firstBackoff = time.Millisecond } // retries are tested, not waited for

// StartFake runs fake-gcs-server over plain http on 127.0.0.1 holding objs (their buckets are
// created), stopped at the end of the test.
func StartFake(t testing.TB, objs ...fakestorage.Object) *fakestorage.Server {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", InitialObjects: objs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// Obj is an object for StartFake.
func Obj(bucket, name string, content []byte) fakestorage.Object {
	return fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: name}, Content: content}
}

// front is a proxy to the fake that records what reaches it and answers some requests itself.
type front struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []*http.Request
	faults []fault // consumed in order by matching requests
}

type fault struct {
	match  string // substring of the escaped path
	status int
	times  int // how many matching requests get it; <0 for all
}

func startFront(t *testing.T, fake *fakestorage.Server) *front {
	t.Helper()
	target, err := url.Parse(fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	f := &front{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reqs = append(f.reqs, r.Clone(context.Background()))
		status := 0
		for i := range f.faults {
			if ft := &f.faults[i]; ft.times != 0 && strings.Contains(r.URL.EscapedPath(), ft.match) {
				status = ft.status
				ft.times--
				break
			}
		}
		f.mu.Unlock()
		if status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": "injected " + http.StatusText(status)}})
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *front) inject(match string, status, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fault{match, status, times})
}

func (f *front) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func (f *front) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs, f.faults = nil, nil
}

// open opens gs://bucket?query through the driver, with STORAGE_EMULATOR_HOST unset.
func open(t *testing.T, bucketURL string) *bucket {
	t.Helper()
	t.Setenv(EmulatorHostEnv, "")
	u, err := url.Parse(bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Driver{}.OpenBucket(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b.(*bucket)
}

func anonymousURL(bucketName, endpoint string) string {
	return "gs://" + bucketName + "?" + url.Values{"endpoint": {endpoint}, "anonymous": {"true"}}.Encode()
}

func kindOf(err error) source.Kind {
	if err == nil {
		return 0
	}
	return Driver{}.ErrorKind(err)
}

func TestStatAndRead(t *testing.T) {
	const odd = "flink/job 1/chk-5/a+b%c?d#e/_metadata" // escaped as one path segment
	fake := StartFake(t,
		Obj("ckpts", "flink/job-1/chk-5/_metadata", []byte("from-gcs")),
		Obj("ckpts", odd, []byte("odd name")),
		fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "ckpts", Name: "corrupt", Crc32c: "AAAAAA=="}, Content: []byte("bytes")},
		fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: "ckpts", Name: "zipped", ContentEncoding: "gzip"}, Content: []byte("not really gzip")},
	)
	b := open(t, anonymousURL("ckpts", fake.URL()))
	other := open(t, anonymousURL("no-such-bucket", fake.URL()))
	want, err := fake.GetObject("ckpts", "flink/job-1/chk-5/_metadata")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	t.Run("stat", func(t *testing.T) {
		a, err := b.Stat(ctx, "flink/job-1/chk-5/_metadata")
		if err != nil {
			t.Fatal(err)
		}
		if a.Size != 8 || a.ETag != strconv.FormatInt(want.Generation, 10) || want.Generation == 0 || !a.ModTime.Equal(want.Updated.Truncate(time.Microsecond)) && !a.ModTime.Equal(want.Updated) {
			t.Errorf("attrs %+v, want size 8, ETag %d, mod time %v", a, want.Generation, want.Updated)
		}
	})
	for _, tc := range []struct {
		name, key string
		b         *bucket
		want      string
		kind      source.Kind
		msg       []string // in the error
	}{
		{"whole object", "flink/job-1/chk-5/_metadata", b, "from-gcs", 0, nil},
		{"name needing escapes", odd, b, "odd name", 0, nil},
		{"missing object", "flink/job-1/chk-6/_metadata", b, "", source.NotFound, []string{"gs://ckpts/flink/job-1/chk-6/_metadata", "HTTP 404"}},
		{"missing bucket", "_metadata", other, "", source.NotFound, []string{"gs://no-such-bucket/_metadata", "HTTP 404"}},
		{"stored gzip-compressed", "zipped", b, "", source.Invalid, []string{"gs://ckpts/zipped", "gzip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, size, err := tc.b.NewReader(ctx, tc.key)
			if tc.kind != 0 {
				if kindOf(err) != tc.kind {
					t.Fatalf("err = %v, want kind %v", err, tc.kind)
				}
				for _, m := range tc.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not name %q", err, m)
					}
				}
				if tc.kind == source.NotFound {
					if _, err := tc.b.Stat(ctx, tc.key); kindOf(err) != source.NotFound || !strings.Contains(err.Error(), tc.msg[0]) {
						t.Errorf("stat: %v, want NotFound naming %s", err, tc.msg[0])
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			body, err := io.ReadAll(rc)
			if err != nil || string(body) != tc.want || size != int64(len(tc.want)) {
				t.Errorf("read %q (size %d), %v; want %q", body, size, err, tc.want)
			}
			if a, err := tc.b.Stat(ctx, tc.key); err != nil || a.Size != size {
				t.Errorf("stat %+v, %v", a, err)
			}
		})
	}
	t.Run("checksum mismatch", func(t *testing.T) {
		rc, _, err := b.NewReader(ctx, "corrupt")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		_, err = io.ReadAll(rc)
		var ce *ChecksumError
		if !errors.As(err, &ce) || kindOf(err) != source.Unavailable || !strings.Contains(err.Error(), "gs://ckpts/corrupt") {
			t.Fatalf("err = %v, want a ChecksumError (Unavailable) naming the object", err)
		}
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A version replaced between Stat and the read. NewVersionReader reads the generation Stat saw:
// still there in a versioned bucket, gone (NotFound) in a plain one. NewReader reads the live
// version, with its own size. Stat names the new generation afterwards.
func TestReplacedBetweenStatAndRead(t *testing.T) {
	fake := StartFake(t)
	ctx := context.Background()
	for _, versioned := range []bool{false, true} {
		name := "plain"
		if versioned {
			name = "versioned"
		}
		t.Run(name, func(t *testing.T) {
			fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name, VersioningEnabled: versioned})
			fake.CreateObject(Obj(name, "chk-1/_metadata", []byte("first")))
			b := open(t, anonymousURL(name, fake.URL()))
			before, err := b.Stat(ctx, "chk-1/_metadata")
			if err != nil {
				t.Fatal(err)
			}
			want := "first"
			for i, content := range []string{"second version", "third version!"} { // a new size, then the same size
				fake.CreateObject(Obj(name, "chk-1/_metadata", []byte(content)))
				rc, size, err := b.NewVersionReader(ctx, "chk-1/_metadata", before)
				if versioned {
					if err != nil {
						t.Fatalf("version %d: pinned read: %v", i+2, err)
					}
					body, err := io.ReadAll(rc)
					rc.Close()
					if err != nil || string(body) != want || size != before.Size {
						t.Fatalf("version %d: pinned read %q size %d, %v; want %q as Stat saw it", i+2, body, size, err, want)
					}
				} else if kindOf(err) != source.NotFound || !strings.Contains(err.Error(), "gs://"+name+"/chk-1/_metadata") {
					t.Fatalf("version %d: pinned read: err = %v, want NotFound naming the object", i+2, err)
				}
				rc, size, err = b.NewReader(ctx, "chk-1/_metadata")
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || string(body) != content || size != int64(len(content)) {
					t.Fatalf("version %d: read %q size %d, %v", i+2, body, size, err)
				}
				after, err := b.Stat(ctx, "chk-1/_metadata")
				if err != nil || after.ETag == before.ETag || after.Size != size {
					t.Fatalf("version %d: stat %+v after %+v, %v: want a new generation", i+2, after, before, err)
				}
				before, want = after, content
			}
		})
	}
}

func TestList(t *testing.T) {
	var objs []fakestorage.Object
	wantItems := []string{"flink/job-1/a", "flink/job-1/b", "flink/job-1/c", "flink/job-1/d", "flink/job-1/e"}
	wantDirs := []string{"flink/job-1/chk-1/", "flink/job-1/chk-2/", "flink/job-1/shared/", "flink/job-1/taskowned/"}
	for _, k := range wantItems {
		objs = append(objs, Obj("ckpts", k, []byte("x")))
	}
	for _, k := range wantDirs {
		objs = append(objs, Obj("ckpts", k+"_metadata", []byte("x")), Obj("ckpts", k+"deeper/state", []byte("x")))
	}
	objs = append(objs, Obj("ckpts", "flink/job-10/_metadata", []byte("x")), Obj("ckpts", "other/_metadata", []byte("x")))
	fake := StartFake(t, objs...)
	f := startFront(t, fake)
	b := open(t, anonymousURL("ckpts", f.URL))
	for _, tc := range []struct {
		name      string
		pageSize  int
		wantPages int
	}{
		{"one page", 0, 1},
		{"pages of two", 2, 3},
		{"pages of one", 1, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.reset()
			b.pageSize = tc.pageSize
			var items, dirs []string
			for e, err := range b.List(context.Background(), "flink/job-1/") {
				if err != nil {
					t.Fatal(err)
				}
				if e.IsDir {
					dirs = append(dirs, e.Key)
				} else {
					items = append(items, e.Key)
				}
			}
			slices.Sort(items)
			slices.Sort(dirs)
			if !slices.Equal(items, wantItems) || !slices.Equal(dirs, wantDirs) {
				t.Errorf("items %q dirs %q, want %q %q", items, dirs, wantItems, wantDirs)
			}
			if n := len(f.requests()); n != tc.wantPages {
				t.Errorf("%d requests, want %d pages", n, tc.wantPages)
			}
		})
	}
	t.Run("missing bucket", func(t *testing.T) {
		nb := open(t, anonymousURL("no-such-bucket", f.URL))
		for _, err := range nb.List(context.Background(), "") {
			if kindOf(err) != source.NotFound || !strings.Contains(err.Error(), "gs://no-such-bucket/") {
				t.Fatalf("err = %v, want NotFound naming the bucket", err)
			}
		}
	})
	t.Run("cancelled between pages", func(t *testing.T) {
		f.reset()
		b.pageSize = 1
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var got []source.ListEntry
		var last error
		for e, err := range b.List(ctx, "flink/job-1/") {
			if err != nil {
				last = err
				continue
			}
			got = append(got, e)
			if len(got) == 1 {
				cancel()
			}
		}
		if !errors.Is(last, context.Canceled) {
			t.Fatalf("last error %v, want context.Canceled", last)
		}
		// The first page (one item, then the prefixes the page carries) is yielded; no second
		// page is asked for.
		if n := len(f.requests()); n != 1 {
			t.Errorf("%d requests after the cancel, want 1", n)
		}
	})
}

func TestHTTPErrors(t *testing.T) {
	fake := StartFake(t, Obj("ckpts", "k", []byte("content")))
	f := startFront(t, fake)
	b := open(t, anonymousURL("ckpts", f.URL))
	for _, tc := range []struct {
		name         string
		status, time int
		kind         source.Kind
		wantRequests int
	}{
		{"bad request", 400, -1, source.Invalid, 1},
		{"unauthorized", 401, -1, source.PermissionDenied, 1},
		{"forbidden", 403, -1, source.PermissionDenied, 1},
		{"not found", 404, -1, source.NotFound, 1},
		{"rate limited", 429, -1, source.Unavailable, attempts},
		{"server error", 500, -1, source.Unavailable, attempts},
		{"one 503, then fine", 503, 1, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []string{"stat", "read", "list"} {
				f.reset()
				f.inject("/b/ckpts/o", tc.status, tc.time)
				var err error
				switch op {
				case "stat":
					_, err = b.Stat(context.Background(), "k")
				case "read":
					var rc io.ReadCloser
					if rc, _, err = b.NewReader(context.Background(), "k"); err == nil {
						rc.Close()
					}
				case "list":
					for _, e := range b.List(context.Background(), "") {
						err = e
					}
				}
				if kindOf(err) != tc.kind {
					t.Errorf("%s: err = %v, want kind %v", op, err, tc.kind)
				}
				if n := len(f.requests()); n != tc.wantRequests {
					t.Errorf("%s: %d requests, want %d", op, n, tc.wantRequests)
				}
				if err != nil {
					shown := "gs://ckpts/k"
					if op == "list" {
						shown = "gs://ckpts/"
					}
					if msg := err.Error(); !strings.Contains(msg, shown) || !strings.Contains(msg, strconv.FormatInt(int64(tc.status), 10)) || !strings.Contains(msg, "injected") {
						t.Errorf("%s: error %q should name %s, the status and the store's message", op, msg, shown)
					}
				}
			}
		})
	}
	t.Run("store stopped", func(t *testing.T) {
		f.Close()
		_, err := b.Stat(context.Background(), "k")
		if kindOf(err) != source.Unavailable || !strings.Contains(err.Error(), "gs://ckpts/k") {
			t.Fatalf("err = %v, want Unavailable naming the object", err)
		}
	})
}

// adcFile writes a service-account key whose token endpoint is tokenURL and points
// GOOGLE_APPLICATION_CREDENTIALS at it.
func adcFile(t *testing.T, tokenURL string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sa := map[string]string{
		"type":           "service_account",
		"project_id":     "preflight-test",
		"private_key_id": "k1",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "reader@preflight-test.iam.gserviceaccount.com",
		"client_id":      "1",
		"token_uri":      tokenURL,
	}
	p := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(p, mustJSON(sa), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", p)
}

const secretToken = "ya29.preflight-secret-token"

// tokenServer is an OAuth token endpoint granting secretToken, or refusing with status.
func tokenServer(t *testing.T, status int) (*httptest.Server, *[]url.Values) {
	var mu sync.Mutex
	var got []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		got = append(got, r.PostForm)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			w.Write([]byte(`{"error":"invalid_grant","error_description":"account disabled"}`))
			return
		}
		w.Write([]byte(`{"access_token":"` + secretToken + `","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestCredentials(t *testing.T) {
	fake := StartFake(t, Obj("ckpts", "k", []byte("content")))
	f := startFront(t, fake)
	entry := "gs://ckpts?" + url.Values{"endpoint": {f.URL}}.Encode()

	t.Run("application default credentials", func(t *testing.T) {
		tok, grants := tokenServer(t, http.StatusOK)
		adcFile(t, tok.URL)
		b := open(t, entry)
		f.reset()
		rc, _, err := b.NewReader(context.Background(), "k")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		if string(body) != "content" {
			t.Fatalf("read %q", body)
		}
		if reqs := f.requests(); len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer "+secretToken {
			t.Fatalf("the store got %d requests, first with Authorization %q", len(reqs), reqs[0].Header.Get("Authorization"))
		}
		// The JWT grant asks for the read-only scope only.
		if len(*grants) != 1 || !strings.Contains(decodeJWTClaims(t, (*grants)[0].Get("assertion")), ReadOnlyScope) {
			t.Errorf("token grants %v, want one asking for %s", *grants, ReadOnlyScope)
		}
		f.inject("/o/k", http.StatusForbidden, -1)
		_, err = b.Stat(context.Background(), "k")
		if kindOf(err) != source.PermissionDenied || strings.Contains(err.Error(), secretToken) || !strings.Contains(err.Error(), "gs://ckpts/k") {
			t.Fatalf("err = %v, want PermissionDenied naming the object and not the token", err)
		}
	})
	t.Run("token refused", func(t *testing.T) {
		tok, grants := tokenServer(t, http.StatusBadRequest)
		adcFile(t, tok.URL)
		b := open(t, entry)
		f.reset()
		_, err := b.Stat(context.Background(), "k")
		if kindOf(err) != source.PermissionDenied || !strings.Contains(err.Error(), "gs://ckpts/k") {
			t.Fatalf("err = %v, want PermissionDenied naming the object", err)
		}
		if len(f.requests()) != 0 || len(*grants) != 1 {
			t.Errorf("store got %d requests, token endpoint %d: want 0 and 1 (no retry of a refusal)", len(f.requests()), len(*grants))
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
		t.Setenv(EmulatorHostEnv, "")
		_, err := Driver{}.OpenBucket(context.Background(), &url.URL{Scheme: Scheme, Host: "ckpts"})
		if kindOf(err) != source.PermissionDenied || !strings.Contains(err.Error(), "anonymous=true") {
			t.Fatalf("err = %v, want PermissionDenied with the ways to give credentials", err)
		}
	})
}

// decodeJWTClaims returns the claims part of a JWT, decoded.
func decodeJWTClaims(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(claims)
}

func TestOptions(t *testing.T) {
	fake := StartFake(t, Obj("ckpts", "k", []byte("content")))
	tok, _ := tokenServer(t, http.StatusOK)
	adcFile(t, tok.URL)
	t.Setenv(EmulatorHostEnv, "")
	for _, tc := range []struct {
		name  string
		query url.Values
		msg   string // "" opens and reads
	}{
		{"anonymous", url.Values{"endpoint": {fake.URL()}, "anonymous": {"true"}}, ""},
		{"access_id=- is anonymous", url.Values{"endpoint": {fake.URL()}, "access_id": {"-"}}, ""},
		{"signing options ignored", url.Values{"endpoint": {fake.URL()}, "anonymous": {"1"}, "access_id": {"signer@x.iam.gserviceaccount.com"}, "private_key_path": {"/nonexistent"}}, ""},
		{"grpc=false", url.Values{"endpoint": {fake.URL()}, "anonymous": {"true"}, "grpc": {"false"}}, ""},
		{"credentials to a loopback http endpoint", url.Values{"endpoint": {fake.URL() + "/storage/v1/"}}, ""},
		{"grpc", url.Values{"grpc": {"true"}}, "JSON API only"},
		{"zonal", url.Values{"zonal": {"true"}}, "JSON API only"},
		{"unknown option", url.Values{"region": {"eu"}}, `unknown option "region"`},
		{"bad anonymous", url.Values{"anonymous": {"maybe"}}, "want true or false"},
		{"endpoint not http", url.Values{"endpoint": {"ftp://127.0.0.1/"}}, "want http(s)://"},
		{"credentials in clear", url.Values{"endpoint": {"http://storage.example.com"}}, "plain http"},
		{"bad universe", url.Values{"universe_domain": {"evil.com/x"}}, "universe_domain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Driver{}.OpenBucket(context.Background(), &url.URL{Scheme: Scheme, Host: "ckpts", RawQuery: tc.query.Encode()})
			if tc.msg != "" {
				if kindOf(err) != source.Invalid || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v, want Invalid containing %q", err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if a, err := b.Stat(context.Background(), "k"); err != nil || a.Size != 7 {
				t.Fatalf("stat %+v, %v", a, err)
			}
		})
	}
	t.Run("universe domain", func(t *testing.T) {
		b, err := Driver{}.OpenBucket(context.Background(), &url.URL{Scheme: Scheme, Host: "ckpts", RawQuery: "universe_domain=example.test"})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if got := b.(*bucket).base.String(); got != "https://storage.example.test" {
			t.Errorf("endpoint %s", got)
		}
	})
}

// STORAGE_EMULATOR_HOST as Google's SDKs read it: host:port (http) or a URL; no credentials.
func TestEmulatorHost(t *testing.T) {
	fake := StartFake(t, Obj("ckpts", "k", []byte("content")))
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json")) // not looked for
	for _, host := range []string{strings.TrimPrefix(fake.URL(), "http://"), fake.URL()} {
		t.Setenv(EmulatorHostEnv, host)
		b, err := Driver{}.OpenBucket(context.Background(), &url.URL{Scheme: Scheme, Host: "ckpts"})
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		rc, _, err := b.NewReader(context.Background(), "k")
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		b.Close()
		if !bytes.Equal(body, []byte("content")) {
			t.Fatalf("%s: read %q", host, body)
		}
	}
}

// TestCredentialsIdentity: refused reads name the service account, where the credentials say it.
func TestCredentialsIdentity(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"type":"service_account","client_email":"flink@proj.iam.gserviceaccount.com"}`, "GCP service account flink@proj.iam.gserviceaccount.com"},
		{`{"type":"authorized_user"}`, "GCP credentials of type authorized_user"},
		{``, ""},
		{`not json`, ""},
	} {
		if got := credentialsIdentity([]byte(c.json)); got != c.want {
			t.Errorf("credentialsIdentity(%s) = %q, want %q", c.json, got, c.want)
		}
	}
}
