package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/openapidoc"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
	"github.com/prometheus/client_golang/prometheus"
)

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInProcessPathsAgree runs every scenario by URI, inline and upload, and through the HTTP
// handler: the four must give the same outcome.
func TestInProcessPathsAgree(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	allow := []string{td}
	if d := corpusDir(); d != "" {
		allow = append(allow, d)
	}
	h := startInProcess(t, Config{Allow: allow})
	ctx := context.Background()
	for _, sc := range checkScenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			byURI := newOutcome(h.c.Check(ctx, &pb.CheckRescaleRequest{
				Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: sc.path}}, Plan: sc.plan, Options: sc.opts}))
			inline := newOutcome(h.c.Check(ctx, &pb.CheckRescaleRequest{
				Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: readFile(t, sc.path)}}, Plan: sc.plan, Options: sc.opts}))
			upload := newOutcome(h.c.CheckFile(ctx, sc.path, sc.plan, sc.opts, nil))
			viaHTTP := newOutcome(httpCheck(t, h.s.HTTPHandler(), sc))
			for name, o := range map[string]outcome{"inline": inline, "upload": upload, "http": viaHTTP} {
				if !o.equal(byURI) {
					t.Errorf("%s differs from uri:\n%s\nvs\n%s", name, o, byURI)
				}
			}
			t.Logf("%s", byURI.brief())
		})
	}
}

// httpCheck posts a scenario to /v1/check and decodes the answer as the gateway encodes it.
func httpCheck(t testing.TB, handler http.Handler, sc scenario) (*pb.RescaleReport, error) {
	t.Helper()
	body, err := protojson.Marshal(&pb.CheckRescaleRequest{
		Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: sc.path}}, Plan: sc.plan, Options: sc.opts})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/check", bytes.NewReader(body))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	return decodeHTTP(t, rec.Code, rec.Body.Bytes())
}

func decodeHTTP(t testing.TB, code int, body []byte) (*pb.RescaleReport, error) {
	t.Helper()
	if code != http.StatusOK {
		var st struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("HTTP %d: %s", code, body)
		}
		return nil, status.Error(codes.Code(st.Code), st.Message)
	}
	var resp pb.CheckRescaleResponse
	if err := protojson.Unmarshal(body, &resp); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return resp.GetReport(), nil
}

func formatDetail(t *testing.T, err error) *pb.MetadataFormatError {
	t.Helper()
	for _, d := range status.Convert(err).Details() {
		if fe, ok := d.(*pb.MetadataFormatError); ok {
			return fe
		}
	}
	t.Fatalf("no MetadataFormatError detail in %v", err)
	return nil
}

func TestErrors(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	good := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	h := startInProcess(t, Config{Allow: []string{td}, MaxUploadBytes: 64 << 10, MaxInlineBytes: 32 << 10})
	ctx := context.Background()
	uri := func(u string) *pb.CheckRescaleRequest {
		return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: u}}}
	}
	inline := func(b []byte) *pb.CheckRescaleRequest {
		return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: b}}}
	}
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		in   string // in the message
	}{
		{"no checkpoint", func() error { _, err := h.c.Check(ctx, &pb.CheckRescaleRequest{}); return err }, codes.InvalidArgument, "set uri or metadata"},
		{"missing file", func() error { _, err := h.c.Check(ctx, uri(filepath.Join(td, "nope"))); return err }, codes.NotFound, filepath.Join(td, "nope")},
		{"outside the allowlist", func() error { _, err := h.c.Check(ctx, uri("file:///etc/passwd")); return err }, codes.PermissionDenied, "allowlist"},
		{"dot-dot escape", func() error { _, err := h.c.Check(ctx, uri(td+"/../go.mod")); return err }, codes.PermissionDenied, ".."},
		{"http disabled", func() error { _, err := h.c.Check(ctx, uri("https://example.com/_metadata")); return err }, codes.PermissionDenied, "disabled"},
		{"inline over the limit", func() error { _, err := h.c.Check(ctx, inline(make([]byte, 33<<10))); return err }, codes.ResourceExhausted, "inline"},
		{"file over the limit", func() error { _, err := h.c.Check(ctx, uri(filepath.Join(td, "kafka-orphan-union"))); return err }, codes.ResourceExhausted, "limit"},
		{"upload over the limit, size announced", func() error {
			_, err := h.c.Upload(ctx, bytes.NewReader(nil), &pb.UploadHeader{SizeBytes: 1 << 20})
			return err
		}, codes.ResourceExhausted, "limit"},
		{"upload over the limit while streaming", func() error {
			f, err := os.Open(filepath.Join(td, "kafka-orphan-union", "_metadata"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = h.c.Upload(ctx, f, &pb.UploadHeader{})
			return err
		}, codes.ResourceExhausted, "limit"},
		{"upload without a header", func() error {
			stream, err := pb.NewPreflightServiceClient(h.c.Conn()).CheckRescaleUpload(ctx)
			if err != nil {
				return err
			}
			stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Chunk{Chunk: good}})
			_, err = stream.CloseAndRecv()
			return err
		}, codes.InvalidArgument, "header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.in) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.code, tc.in)
			}
		})
	}
	t.Run("plan names an unknown operator", func(t *testing.T) {
		req := uri(filepath.Join(td, "compact-sink"))
		req.Plan = &pb.RescalePlan{VertexParallelism: map[string]int32{"no-such-operator": 3}}
		_, err := h.c.Check(ctx, req)
		if status.Code(err) != codes.InvalidArgument {
			t.Fatalf("err = %v, want InvalidArgument", err)
		}
		var br *errdetails.BadRequest
		for _, d := range status.Convert(err).Details() {
			if b, ok := d.(*errdetails.BadRequest); ok {
				br = b
			}
		}
		if br == nil || len(br.GetFieldViolations()) != 1 || !strings.HasPrefix(br.GetFieldViolations()[0].GetField(), "plan.") {
			t.Errorf("details %v, want a BadRequest naming the plan field", status.Convert(err).Details())
		}
	})
	// Malformed metadata: INVALID_ARGUMENT with the offset and field in the detail, through
	// every path.
	truncated := good[:len(good)/2]
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"inline", func() error { _, err := h.c.Check(ctx, inline(truncated)); return err }},
		{"upload", func() error { _, err := h.c.Upload(ctx, bytes.NewReader(truncated), nil); return err }},
	} {
		t.Run("truncated/"+tc.name, func(t *testing.T) {
			err := tc.call()
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("err = %v, want InvalidArgument", err)
			}
			fe := formatDetail(t, err)
			if fe.GetOffset() <= 0 || fe.GetOffset() > int64(len(truncated)) || fe.GetField() == "" || fe.GetMessage() == "" {
				t.Errorf("detail = %v, want an offset inside the file and a field", fe)
			}
		})
	}
	t.Run("bad magic", func(t *testing.T) {
		_, err := h.c.Check(ctx, inline([]byte("PK\x03\x04 not a checkpoint")))
		if fe := formatDetail(t, err); fe.GetOffset() != 0 || fe.GetField() == "" {
			t.Errorf("detail = %v", fe)
		}
	})
}

// TestUploadCancelNoLeak cancels uploads mid-stream, by the client and by deadline: the handler
// must return and leave no goroutine behind (checked by noLeaks).
func TestUploadCancelNoLeak(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	h := startInProcess(t, Config{})
	body := readFile(t, filepath.Join(td, "kafka-orphan-union", "_metadata"))
	for i, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		code codes.Code
	}{
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, codes.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, codes.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			// Half the file, then a reader that blocks until the context ends.
			r := io.MultiReader(bytes.NewReader(body[:len(body)/2]), blockingReader{ctx})
			errc := make(chan error, 1)
			go func() { _, err := h.c.Upload(ctx, r, &pb.UploadHeader{}); errc <- err }()
			if tc.code == codes.Canceled {
				waitFor(t, func() bool { return testutil.ToFloat64(h.s.metrics.receiving) == 1 })
				cancel()
			}
			if err := <-errc; status.Code(err) != tc.code {
				t.Fatalf("err = %v, want %v", err, tc.code)
			}
			// The server side ends too: its memory is released and the RPC is logged as ended (as
			// Canceled or DeadlineExceeded: at a deadline, the client's RST_STREAM and the
			// server's own timer race).
			waitFor(t, func() bool {
				return testutil.ToFloat64(h.s.metrics.receiving) == 0 && testutil.ToFloat64(h.s.metrics.memReserved) == 0
			})
			waitFor(t, func() bool {
				l := h.logs.String()
				return strings.Count(l, `"code":"Canceled"`)+strings.Count(l, `"code":"DeadlineExceeded"`) == i+1
			})
		})
	}
}

type blockingReader struct{ ctx context.Context }

func (b blockingReader) Read([]byte) (int, error) { <-b.ctx.Done(); return 0, b.ctx.Err() }

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
	}
}

// TestConcurrencyLimit: with every check slot taken and no queue, a check is refused with
// RESOURCE_EXHAUSTED and a RetryInfo hint; an upload still arriving holds no slot.
func TestConcurrencyLimit(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	h := startInProcess(t, Config{Allow: []string{td}, MaxConcurrent: 1, QueueWait: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := h.c.Upload(ctx, blockingReader{ctx}, &pb.UploadHeader{}); done <- err }()
	waitFor(t, func() bool { return testutil.ToFloat64(h.s.metrics.receiving) == 1 })
	req := &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Join(td, "compact-sink")}}}
	if _, err := h.c.Check(context.Background(), req); err != nil {
		t.Fatalf("check beside an upload still arriving: %v", err)
	}
	slot, err := h.s.adm.acquire(context.Background(), true, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	// The same question again is answered from the result cache, which needs no slot; another
	// one must run the check.
	if _, err := h.c.Check(context.Background(), req); err != nil {
		t.Fatalf("cached answer with the slot taken: %v", err)
	}
	req.Plan = &pb.RescalePlan{DefaultParallelism: 2}
	_, err = h.c.Check(context.Background(), req)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "check slots") {
		t.Fatalf("check with the slot taken: %v, want ResourceExhausted naming the slots", err)
	}
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		retry, _ = d.(*errdetails.RetryInfo)
	}
	if retry == nil {
		t.Error("no RetryInfo detail")
	}
	// Health is never limited.
	if err := h.c.Health(context.Background()); err != nil {
		t.Errorf("health while full: %v", err)
	}
	slot.release()
	cancel()
	<-done
	waitFor(t, func() bool { return testutil.ToFloat64(h.s.metrics.inflight) == 0 })
	if _, err := h.c.Check(context.Background(), req); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// fakeStream is a server stream without a transport, for calling stream interceptors directly.
type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (f *fakeStream) Context() context.Context     { return f.ctx }
func (f *fakeStream) SetHeader(metadata.MD) error  { return nil }
func (f *fakeStream) SendHeader(metadata.MD) error { return nil }
func (f *fakeStream) SetTrailer(metadata.MD)       {}

func TestRecoverInterceptor(t *testing.T) {
	logs := &syncBuffer{}
	s := &Server{log: slogJSON(logs)}
	info := &grpc.UnaryServerInfo{FullMethod: pb.PreflightService_CheckRescale_FullMethodName}
	// The interceptors as the server chains them; recovery sits among them.
	s.metrics = newMetrics(prometheus.NewRegistry())
	unary := s.unaryInterceptors()
	h := grpc.UnaryHandler(func(context.Context, any) (any, error) { panic("boom") })
	for i := len(unary) - 1; i >= 0; i-- {
		next, ic := h, unary[i]
		h = func(ctx context.Context, req any) (any, error) { return ic(ctx, req, info, next) }
	}
	_, err := h(context.Background(), nil)
	if status.Code(err) != codes.Internal {
		t.Fatalf("err = %v, want Internal", err)
	}
	if l := logs.String(); !strings.Contains(l, "boom") || !strings.Contains(l, "server_test.go") {
		t.Errorf("log lacks the panic value or stack: %s", l)
	}
	stream := s.streamInterceptors()
	sh := grpc.StreamHandler(func(any, grpc.ServerStream) error { panic(errors.New("boom2")) })
	for i := len(stream) - 1; i >= 0; i-- {
		next, ic := sh, stream[i]
		sh = func(srv any, ss grpc.ServerStream) error {
			return ic(srv, ss, &grpc.StreamServerInfo{FullMethod: "/x/y"}, next)
		}
	}
	err = sh(nil, &fakeStream{ctx: context.Background()})
	if status.Code(err) != codes.Internal {
		t.Fatalf("stream err = %v, want Internal", err)
	}
}

func TestDeadlines(t *testing.T) {
	s := &Server{cfg: Config{RequestTimeout: time.Minute, MaxTimeout: 5 * time.Minute}}
	for _, tc := range []struct {
		name   string
		set    time.Duration // 0: no deadline
		within [2]time.Duration
	}{
		{"default", 0, [2]time.Duration{59 * time.Second, time.Minute}},
		{"kept", 10 * time.Second, [2]time.Duration{9 * time.Second, 10 * time.Second}},
		{"capped", time.Hour, [2]time.Duration{299 * time.Second, 5 * time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.set > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.set)
				defer cancel()
			}
			var left time.Duration
			info := &grpc.UnaryServerInfo{FullMethod: pb.PreflightService_CheckRescale_FullMethodName}
			s.deadlineUnary(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
				dl, _ := ctx.Deadline()
				left = time.Until(dl)
				return nil, nil
			})
			if left < tc.within[0] || left > tc.within[1] {
				t.Errorf("deadline in %v, want within %v", left, tc.within)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	h := startInProcess(t, Config{Allow: []string{td}})
	req := &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Join(td, "compact-sink")}}}
	api := pb.NewPreflightServiceClient(h.c.Conn())
	for _, tc := range []struct{ name, sent, want string }{
		{"given", "req-42", "req-42"},
		{"generated", "", ""},
		{"forged log line replaced", `x" "level":"ERROR`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.sent != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, RequestIDHeader, tc.sent)
			}
			var hdr metadata.MD
			if _, err := api.CheckRescale(ctx, req, grpc.Header(&hdr)); err != nil {
				t.Fatal(err)
			}
			got := hdr.Get(RequestIDHeader)
			if len(got) != 1 || (tc.want != "" && got[0] != tc.want) || (tc.want == "" && (got[0] == "" || got[0] == tc.sent)) {
				t.Fatalf("x-request-id = %q", got)
			}
			line := ""
			for _, l := range strings.Split(h.logs.String(), "\n") {
				if strings.Contains(l, `"request_id":"`+got[0]+`"`) {
					line = l
				}
			}
			// One JSON line per RPC, with what the handler learned.
			var entry map[string]any
			if err := json.Unmarshal([]byte(line), &entry); err != nil {
				t.Fatalf("no JSON log line for %s: %q", got[0], line)
			}
			if entry["verdict"] != "VERDICT_ALLOW" || entry["code"] != "OK" || !strings.HasSuffix(entry["source"].(string), "compact-sink/_metadata") {
				t.Errorf("log line %s", line)
			}
		})
	}
	t.Run("http", func(t *testing.T) {
		body := `{"checkpoint":{"uri":"` + filepath.Join(td, "compact-sink") + `"}}`
		req := httptest.NewRequest(http.MethodPost, "/v1/check", strings.NewReader(body))
		req.Header.Set("X-Request-Id", "http-7")
		rec := httptest.NewRecorder()
		h.s.HTTPHandler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || rec.Header().Get("X-Request-Id") != "http-7" {
			t.Fatalf("HTTP %d, X-Request-Id %q: %s", rec.Code, rec.Header().Get("X-Request-Id"), rec.Body)
		}
	})
}

func TestCacheAndMetrics(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	td := testdataDir(t)
	meta := filepath.Join(dir, "_metadata")
	os.WriteFile(meta, readFile(t, filepath.Join(td, "compact-sink", "_metadata")), 0o644)
	// The layout cache alone: no result cache, the source asked on every request (memo_test.go
	// tests those two).
	h := startInProcess(t, Config{Allow: []string{dir}, CacheEntries: 2, ResultCacheBytes: -1, RevalidateInterval: -1})
	req := &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: dir}},
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}}
	for range 3 {
		if _, err := h.c.Check(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := testutil.ToFloat64(h.s.metrics.cache.WithLabelValues("hit")), testutil.ToFloat64(h.s.metrics.cache.WithLabelValues("miss")); hits != 2 || misses != 1 {
		t.Errorf("hits %v misses %v, want 2 and 1", hits, misses)
	}
	// A rewritten file (new size or mtime) is decoded again.
	os.WriteFile(meta, readFile(t, filepath.Join(td, "max-parallelism", "_metadata")), 0o644)
	h.c.Check(context.Background(), &pb.CheckRescaleRequest{Checkpoint: req.Checkpoint})
	if misses := testutil.ToFloat64(h.s.metrics.cache.WithLabelValues("miss")); misses != 2 {
		t.Errorf("misses after rewrite = %v, want 2", misses)
	}
	rec := httptest.NewRecorder()
	h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`preflight_rpc_requests_total{code="OK",method="/preflight.v1.PreflightService/CheckRescaleStream"} 4`,
		`preflight_verdicts_total{verdict="VERDICT_DENY"} 3`,
		`preflight_layout_cache_requests_total{result="hit"} 2`,
		`preflight_metadata_decoded_bytes_total`,
		`preflight_metadata_decode_seconds_count 2`,
		`preflight_rpc_duration_seconds_bucket`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestLayoutCacheEvicts(t *testing.T) {
	c := newLayoutCache(2, 1<<20)
	for _, k := range []string{"a", "b", "a", "c"} { // "a" is refreshed, so "b" goes
		if _, ok := c.get(k); !ok {
			c.put(k, cacheValue{bytes: 100}, 1<<30)
		}
	}
	if _, ok := c.get("b"); ok || c.len() != 2 {
		t.Errorf("b still cached or len %d", c.len())
	}
	if _, ok := c.get("a"); !ok {
		t.Error("a evicted")
	}
	if _, ok := c.get(""); ok {
		t.Error("empty key cached")
	}
}

func TestHTTPEndpoints(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{})
	for _, tc := range []struct {
		path string
		code int
		in   string
	}{
		{"/healthz", 200, "ok"},
		{"/openapi.json", 200, `"/v1/check"`},
		{"/metrics", 200, "preflight_checks_in_flight"},
	} {
		rec := httptest.NewRecorder()
		h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.in) {
			t.Errorf("GET %s: %d %.200s", tc.path, rec.Code, rec.Body)
		}
	}
}

func TestHTTPBodyLimit(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{MaxInlineBytes: 1 << 20})
	body := `{"checkpoint":{"metadata":"` + strings.Repeat("A", 8<<20) + `"}}`
	rec := httptest.NewRecorder()
	h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/check", strings.NewReader(body)))
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), `"code":8`) {
		t.Fatalf("HTTP %d %.300s, want 429 RESOURCE_EXHAUSTED", rec.Code, rec.Body)
	}
}

// TestOpenAPIUpToDate keeps the embedded document equal to the generated file plus the upload
// fragment (what make generate writes).
func TestOpenAPIUpToDate(t *testing.T) {
	want, err := openapidoc.Build(readFile(t, "../proto/preflight/v1/preflight.swagger.json"), readFile(t, "openapi_upload.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, openAPI) {
		t.Fatal("server/openapi.json is stale: run make generate")
	}
}

func TestDrain(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{DrainDelay: 300 * time.Millisecond})
	hc := healthpb.NewHealthClient(h.c.Conn())
	done := make(chan error, 1)
	go func() { done <- h.s.Shutdown(context.Background()) }()
	waitFor(t, func() bool {
		r, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: pb.PreflightService_ServiceDesc.ServiceName})
		return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING
	})
	rec := httptest.NewRecorder()
	h.s.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/healthz while draining: %d", rec.Code)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentChecksDecodeOnce: parallel probes of one checkpoint share one decode.
func TestConcurrentChecksDecodeOnce(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	const n = 6
	h := startInProcess(t, Config{Allow: []string{td}, MaxConcurrent: n})
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		go func() {
			<-start
			_, err := h.c.Check(context.Background(), &pb.CheckRescaleRequest{
				Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Join(td, "kafka-orphan-union")}},
				Plan:       &pb.RescalePlan{DefaultParallelism: int32(2 + i)}})
			errs <- err
		}()
	}
	close(start)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	m := h.s.metrics
	miss, hit, shared := testutil.ToFloat64(m.cache.WithLabelValues("miss")), testutil.ToFloat64(m.cache.WithLabelValues("hit")), testutil.ToFloat64(m.cache.WithLabelValues("shared"))
	if miss != 1 || hit+shared != n-1 {
		t.Errorf("miss %v hit %v shared %v: want one decode for %d checks", miss, hit, shared, n)
	}
}

// TestCachedLayoutLeaderCancelled: the decode a request started goes on for the requests
// waiting for it when that request is cancelled (they do not inherit a cancellation that is not
// their own); and when the request left before its decode could take its source, a waiter
// decodes with its own.
func TestCachedLayoutLeaderCancelled(t *testing.T) {
	s := &Server{cfg: Config{CacheEntries: 4, MemoryBudget: 1 << 30}, cache: newLayoutCache(4, 1<<30), metrics: newMetrics(prometheus.NewRegistry())}
	s.adm = newAdmission(&s.cfg, s.cache, s.metrics)
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	started, release := make(chan context.Context, 1), make(chan struct{})
	leaderErr := make(chan error, 1)
	go func() {
		_, err := s.cachedLayout(leaderCtx, "k", func(ctx context.Context) (*checkpoint.Layout, error) {
			started <- ctx
			select {
			case <-release:
				return &checkpoint.Layout{CheckpointID: 7}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		leaderErr <- err
	}()
	decodeCtx := <-started
	waiterDone := make(chan *checkpoint.Layout, 1)
	go func() {
		l, err := s.cachedLayout(context.Background(), "k", func(context.Context) (*checkpoint.Layout, error) {
			return &checkpoint.Layout{CheckpointID: 8}, nil
		})
		if err != nil {
			t.Error(err)
		}
		waiterDone <- l
	}()
	eventually(t, "the waiter joining", func() bool { return s.flights.waiting() == 2 })
	cancelLeader()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	if err := decodeCtx.Err(); err != nil {
		t.Fatalf("the decode was cancelled with its first request while another waits: %v", err)
	}
	close(release)
	if l := <-waiterDone; l == nil || l.CheckpointID != 7 {
		t.Fatalf("waiter got %v, want the shared decode's layout", l)
	}
	if v, ok := s.cache.get("k"); !ok || v.layout.CheckpointID != 7 {
		t.Error("the shared decode was not cached")
	}

	// The first request left before its decode took the source: the waiter decodes its own.
	gone := make(chan struct{})
	go func() {
		s.cachedLayout(context.Background(), "k2", func(ctx context.Context) (*checkpoint.Layout, error) {
			<-gone
			return nil, errSourceGone
		})
	}()
	eventually(t, "the first request's flight", func() bool { return s.flights.waiting() == 1 })
	go func() { // (a waiter that joins late finds no flight and decodes its own: the same answer)
		for deadline := time.Now().Add(10 * time.Second); s.flights.waiting() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		close(gone)
	}()
	l, err := s.cachedLayout(context.Background(), "k2", func(context.Context) (*checkpoint.Layout, error) {
		return &checkpoint.Layout{CheckpointID: 9}, nil
	})
	if err != nil || l.CheckpointID != 9 {
		t.Fatalf("waiter after the source was gone: %v, %v", l, err)
	}
}
