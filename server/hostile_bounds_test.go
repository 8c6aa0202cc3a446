package server

// The bounds part of the hostile suite: callers and upstreams that try to hold the service
// hostage (stalled uploads, slow headers, trickled bodies, absurd Retry-After, silent upstreams),
// and the admission rules that stop them (memory budget, fair queue, per-peer share).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/memmodel"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// stalledUpload opens an upload, sends the header (announcing size bytes) and the first part
// bytes of body, then sends nothing more and waits for the server to end the stream.
func stalledUpload(ctx context.Context, c *client.Client, body []byte, part int) (time.Time, error) {
	stream, err := pb.NewPreflightServiceClient(c.Conn()).CheckRescaleUpload(ctx)
	if err != nil {
		return time.Now(), err
	}
	stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: &pb.UploadHeader{SizeBytes: int64(len(body))}}})
	if part > 0 {
		stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Chunk{Chunk: body[:part]}})
	}
	start := time.Now()
	// RecvMsg without CloseSend: the stream stays open from this side.
	err = stream.RecvMsg(new(pb.CheckRescaleUploadResponse))
	return start, err
}

// TestHostileStalledUploads: six uploads that stop sending, open at once, hold no check slot (a
// normal check and a normal upload still answer within 5 s) and are ended by the server after
// the idle timeout (2 s here; the default is DefaultUploadIdleTimeout, 30 s), well within 60 s.
func TestHostileStalledUploads(t *testing.T) {
	noLeaks(t)
	if DefaultUploadIdleTimeout != 30*time.Second {
		t.Errorf("DefaultUploadIdleTimeout = %v; the README documents 30 s", DefaultUploadIdleTimeout)
	}
	td := testdataDir(t)
	compact := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	const idle, stalled = 2 * time.Second, 6
	h := startInProcess(t, Config{Allow: []string{td}, UploadIdleTimeout: idle, MaxConcurrent: 2})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type ended struct {
		took time.Duration
		err  error
	}
	results := make(chan ended, stalled)
	for i := range stalled {
		go func() {
			start, err := stalledUpload(ctx, h.c, compact, (i%2)*len(compact)/2) // header only, or half the file
			results <- ended{time.Since(start), err}
		}()
	}
	waitFor(t, func() bool { return testutil.ToFloat64(h.s.metrics.receiving) == stalled })

	// A normal check and a normal upload, while the six stall.
	plan := &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}
	for name, call := range map[string]func(context.Context) (*pb.RescaleReport, error){
		"check": func(ctx context.Context) (*pb.RescaleReport, error) {
			return h.c.Check(ctx, uriReq(filepath.Join(td, "compact-sink"), plan, nil))
		},
		"upload": func(ctx context.Context) (*pb.RescaleReport, error) {
			return h.c.Upload(ctx, bytes.NewReader(compact), &pb.UploadHeader{Plan: plan, SizeBytes: int64(len(compact))})
		},
	} {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		start := time.Now()
		rep, err := call(cctx)
		ccancel()
		if err != nil || rep.GetVerdict() != pb.Verdict_VERDICT_DENY {
			t.Fatalf("normal %s beside %d stalled uploads: %v (verdict %v)", name, stalled, err, rep.GetVerdict())
		}
		t.Logf("normal %s beside %d stalled uploads answered in %v", name, stalled, time.Since(start).Round(time.Millisecond))
	}

	var longest time.Duration
	for range stalled {
		r := <-results
		if status.Code(r.err) != codes.DeadlineExceeded || !strings.Contains(status.Convert(r.err).Message(), "upload-idle-timeout") {
			t.Errorf("stalled upload ended with %v, want DeadlineExceeded naming --upload-idle-timeout", r.err)
		}
		if r.took > 60*time.Second {
			t.Errorf("stalled upload ended after %v, want within 60 s", r.took)
		}
		longest = max(longest, r.took)
	}
	if n := testutil.ToFloat64(h.s.metrics.uploadEnds.WithLabelValues("idle")); n != stalled {
		t.Errorf("preflight_uploads_refused_total{reason=idle} = %v, want %d", n, stalled)
	}
	waitFor(t, func() bool { return testutil.ToFloat64(h.s.metrics.memReserved) == 0 })
	t.Logf("%d stalled uploads ended by the server after at most %v (idle timeout %v)", stalled, longest.Round(time.Millisecond), idle)
}

// TestHostileUploadSize: size_bytes must match the bytes that arrive.
func TestHostileUploadSize(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	compact := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	h := startInProcess(t, Config{})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		body []byte
		size int64
		want codes.Code
		msg  string
	}{
		{"announced more than sent", compact, int64(len(compact)) + 1, codes.InvalidArgument, "announced size_bytes"},
		{"announced less than sent", compact, int64(len(compact)) - 1, codes.InvalidArgument, "more than the"},
		{"announced negative", compact, -1, codes.InvalidArgument, "negative"},
		{"announced exactly", compact, int64(len(compact)), codes.OK, ""},
		{"not announced (0: unknown)", compact, 0, codes.OK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.c.Upload(ctx, bytes.NewReader(tc.body), &pb.UploadHeader{SizeBytes: tc.size})
			if status.Code(err) != tc.want || !strings.Contains(status.Convert(err).Message(), tc.msg) {
				t.Fatalf("%v, want %v containing %q", err, tc.want, tc.msg)
			}
		})
	}
}

// TestHostileMemoryBudget: what can never fit is refused at once, naming the budget; the layout
// cache is counted in bytes and gives way to requests.
func TestHostileMemoryBudget(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	kafka := filepath.Join(td, "kafka-orphan-union", "_metadata")
	size := int64(len(readFile(t, kafka)))
	budget := memmodel.RequestBytes(size) + 1<<20 // one check of the Kafka file fits, with 1 MiB to spare
	h := startInProcess(t, Config{Allow: []string{td}, MemoryBudget: budget, QueueWait: 200 * time.Millisecond})
	ctx := context.Background()

	// An upload announcing a file whose estimate exceeds the budget.
	big := (budget-memmodel.RequestBaseBytes)/memmodel.PerFileByte + 1
	_, err := h.c.Upload(ctx, bytes.NewReader(nil), &pb.UploadHeader{SizeBytes: big})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "memory budget of") {
		t.Fatalf("upload beyond the budget: %v, want ResourceExhausted naming the memory budget", err)
	}
	// The Kafka file fits alone; it is then cached, and its measured bytes are counted.
	if _, err := h.c.Check(ctx, uriReq(kafka, nil, nil)); err != nil {
		t.Fatal(err)
	}
	cached, _ := h.s.cache.sizes() // layouts (the answer is cached too, in its own gauge)
	if cached <= 0 || testutil.ToFloat64(h.s.metrics.cacheBytes) != float64(cached) {
		t.Fatalf("cache holds %d bytes, gauge %v", cached, testutil.ToFloat64(h.s.metrics.cacheBytes))
	}
	t.Logf("kafka-orphan-union: %d bytes of _metadata, %d bytes cached (RetainedBytes), estimate %d", size, cached, memmodel.RequestBytes(size))
	// A request that needs the whole budget evicts the cache instead of being refused.
	g, err := h.s.adm.acquire(ctx, false, budget, false)
	if err != nil {
		t.Fatalf("a request of the whole budget beside the cache: %v", err)
	}
	if h.s.cache.size() != 0 {
		t.Errorf("cache still holds %d bytes beside a request of the whole budget", h.s.cache.size())
	}
	// While it holds the budget, another request waits QueueWait and is refused, naming it.
	_, err = h.c.Check(ctx, inlineReq(readFile(t, filepath.Join(td, "compact-sink", "_metadata")), nil, nil))
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "--memory-budget") {
		t.Errorf("check while the budget is held: %v, want ResourceExhausted naming --memory-budget", err)
	}
	g.release()
	if _, err := h.c.Check(ctx, uriReq(kafka, nil, nil)); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

// TestAdmissionFairness: the queue serves the least-loaded peer first, and one peer's arriving
// uploads cannot hold more than its share of the budget.
func TestAdmissionFairness(t *testing.T) {
	cfg := Config{MaxConcurrent: 1, MemoryBudget: 100 << 20, PeerShare: 0.5, QueueWait: 5 * time.Second}
	m := newMetrics(prometheus.NewRegistry())
	a := newAdmission(&cfg, newLayoutCache(1, 1<<20), m)
	ctxA := peerCtx("10.0.0.1:1000")
	ctxB := peerCtx("10.0.0.2:2000")

	// Peer A takes the only slot and queues three more; then B queues one.
	first, err := a.acquire(ctxA, true, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 4)
	var wg sync.WaitGroup
	queue := func(ctx context.Context, name string) {
		wg.Go(func() {
			g, err := a.acquire(ctx, true, 0, false)
			if err != nil {
				t.Error(name, err)
				return
			}
			order <- name
			time.Sleep(10 * time.Millisecond)
			g.release()
		})
	}
	for i := range 3 { // one at a time, so that the queue order is A0 A1 A2
		queue(ctxA, fmt.Sprintf("A%d", i))
		waitFor(t, func() bool { return testutil.ToFloat64(m.queued) == float64(i+1) })
	}
	queue(ctxB, "B")
	waitFor(t, func() bool { return testutil.ToFloat64(m.queued) == 4 })
	first.release()
	wg.Wait()
	close(order)
	var got []string
	for n := range order {
		got = append(got, n)
	}
	// When the slot frees, A holds nothing and B nothing: the oldest (A0) goes first; after that
	// A0 holds the slot, so B, which holds nothing, goes before A1 and A2.
	if strings.Join(got, " ") != "A0 B A1 A2" {
		t.Errorf("grant order %v, want A0 B A1 A2", got)
	}

	// Peer share: A's arriving uploads hold 40 MiB; a second one of 20 MiB would pass A's
	// 50 MiB share and waits (here: is refused after a short wait); B's is admitted.
	cfg.QueueWait = 100 * time.Millisecond
	upA, err := a.acquire(ctxA, false, 40<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.acquire(ctxA, false, 20<<20, true); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("peer A over its share: %v, want ResourceExhausted", err)
	}
	upB, err := a.acquire(ctxB, false, 20<<20, true)
	if err != nil {
		t.Errorf("peer B within its share: %v", err)
	}
	// Once A's upload has arrived, it no longer counts against A's share of arriving uploads.
	upA.received()
	upA2, err := a.acquire(ctxA, false, 20<<20, true)
	if err != nil {
		t.Errorf("peer A after its first upload arrived: %v", err)
	}
	for _, g := range []*grant{upA, upB, upA2} {
		g.release()
	}
	if a.memUsed != 0 || a.slotsUsed != 0 || len(a.peers) != 0 {
		t.Errorf("after releasing everything: mem %d, slots %d, peers %v", a.memUsed, a.slotsUsed, a.peers)
	}
}

// peerCtx is a context whose gRPC peer is addr.
func peerCtx(addr string) context.Context {
	return peer.NewContext(context.Background(), &peer.Peer{Addr: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr))})
}

// TestHostileBurstQueues: 50 concurrent callers against the default slots and queue wait get no
// RESOURCE_EXHAUSTED.
func TestHostileBurstQueues(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	h := startInProcess(t, Config{Allow: []string{td}})
	const callers, each = 50, 4
	req := uriReq(filepath.Join(td, "compact-sink"), &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}, nil)
	if _, err := h.c.Check(context.Background(), req); err != nil { // warm the cache
		t.Fatal(err)
	}
	var refused, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for range each {
				_, err := h.c.Check(context.Background(), req)
				switch {
				case status.Code(err) == codes.ResourceExhausted:
					refused.Add(1)
				case err != nil:
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if refused.Load() > 0 || failed.Load() > 0 {
		t.Errorf("%d of %d requests at c=%d got RESOURCE_EXHAUSTED, %d other errors (queue wait %v)", refused.Load(), callers*each, callers, failed.Load(), h.s.cfg.QueueWait)
	}
	t.Logf("%d requests at c=%d on %d slots in %v, none refused", callers*each, callers, h.s.cfg.MaxConcurrent, time.Since(start).Round(time.Millisecond))
}

// serveHTTP runs the server's API (and ops) HTTP listener on loopback TCP.
func serveHTTP(t *testing.T, s *Server, ops bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		if ops {
			s.ServeOpsListener(l)
		} else {
			s.ServeHTTPListener(l)
		}
		close(done)
	}()
	t.Cleanup(func() { s.Close(); <-done })
	return l.Addr().String()
}

// cutAfter dials addr, writes head, then trickles one byte of trickle every every, and returns
// how long the server took to close the connection (or answer).
func cutAfter(addr, head, trickle string, every, limit time.Duration) (time.Duration, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	start := time.Now()
	if _, err := io.WriteString(c, head); err != nil {
		return 0, err
	}
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c) // until the server answers and closes, or resets
		close(closed)
	}()
	for i := 0; ; i++ {
		select {
		case <-closed:
			return time.Since(start), nil
		case <-time.After(every):
		}
		if time.Since(start) > limit {
			return time.Since(start), fmt.Errorf("still open after %v", limit)
		}
		if _, err := io.WriteString(c, string(trickle[i%len(trickle)])); err != nil {
			<-closed
			return time.Since(start), nil
		}
	}
}

// TestHostileSlowHTTPClients: with the default limits, 100 clients sending headers one byte a
// second are cut within 15 s (ReadHeaderTimeout 10 s), and 100 clients trickling a JSON body one
// byte every 2 s are cut within the body timeout (30 s) plus a margin for a loaded machine.
func TestHostileSlowHTTPClients(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{})
	addr := serveHTTP(t, h.s, false)
	if h.s.cfg.HTTPReadHeaderTimeout != 10*time.Second || h.s.cfg.HTTPBodyTimeout != 30*time.Second || h.s.cfg.HTTPIdleTimeout != 60*time.Second {
		t.Fatalf("defaults %v / %v / %v, documented 10 s / 30 s / 60 s", h.s.cfg.HTTPReadHeaderTimeout, h.s.cfg.HTTPBodyTimeout, h.s.cfg.HTTPIdleTimeout)
	}
	const clients = 100
	type cut struct {
		kind string
		took time.Duration
		err  error
	}
	results := make(chan cut, 2*clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(2)
		go func() {
			defer wg.Done()
			d, err := cutAfter(addr, "POST /v1/check HTTP/1.1\r\nHost: x\r\n", "X-Slow: aaaaaaaaaaaaaaaa\r\n", time.Second, 40*time.Second)
			results <- cut{"header", d, err}
		}()
		go func() {
			defer wg.Done()
			d, err := cutAfter(addr, "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", `{"checkpoint":{"uri":"/x"}}`, 2*time.Second, 60*time.Second)
			results <- cut{"body", d, err}
		}()
	}
	wg.Wait()
	close(results)
	longest := map[string]time.Duration{}
	for r := range results {
		if r.err != nil {
			t.Errorf("%s trickler: %v", r.kind, r.err)
		}
		longest[r.kind] = max(longest[r.kind], r.took)
	}
	if longest["header"] > 15*time.Second {
		t.Errorf("slow-header clients held for up to %v, want within 15 s", longest["header"])
	}
	if longest["body"] > 30*time.Second+8*time.Second {
		t.Errorf("body tricklers held for up to %v, want within 30 s (+ margin)", longest["body"])
	}
	t.Logf("%d slow-header clients cut after at most %v; %d body tricklers after at most %v", clients, longest["header"].Round(time.Millisecond), clients, longest["body"].Round(time.Millisecond))
}

// TestHostileHTTPIdleKeepAlive: an idle keep-alive connection is closed after HTTPIdleTimeout
// (1 s here; the default is 60 s, checked in TestHostileSlowHTTPClients).
func TestHostileHTTPIdleKeepAlive(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{HTTPIdleTimeout: time.Second})
	addr := serveHTTP(t, h.s, false)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF (closed by the server)", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("idle connection closed after %v, want about 1 s", took)
	}
}

// TestHostileHTTPErrors: 405 with Allow for a wrong method (not 501), 400 for malformed JSON,
// and X-Request-Id on every response, errors included.
func TestHostileHTTPErrors(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{})
	addr := serveHTTP(t, h.s, false)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	for _, tc := range []struct {
		method, path, body string
		code               int
		allow              string
	}{
		{"GET", "/v1/check", "", 405, "POST"},
		{"PUT", "/v1/inspect", "{}", 405, "POST"},
		{"POST", "/v1/check", "{not json", 400, ""},
		{"POST", "/v1/check", `{"checkpoint":{"uri":"/nowhere"}}`, 403, ""},
		{"GET", "/v1/nothing", "", 404, ""},
		{"POST", "/metrics", "", 405, "GET, HEAD"},
		{"GET", "/healthz", "", 200, ""},
		{"GET", "/readyz", "", 200, ""},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader(tc.body))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, resp.StatusCode, b, tc.code)
		}
		if got := resp.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
		if id := resp.Header.Values("X-Request-Id"); len(id) != 1 || !validRequestID(id[0]) {
			t.Errorf("%s %s: X-Request-Id %q, want exactly one", tc.method, tc.path, id)
		}
	}
	// The caller's own ID is echoed, also on an error.
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/check", strings.NewReader("{"))
	req.Header.Set("X-Request-Id", "caller-7")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("X-Request-Id") != "caller-7" {
		t.Errorf("malformed JSON with an ID: %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
}

// TestOpsListener: with mutual TLS on the API listeners, probes and scrapes still work on the
// plain-HTTP ops listener, and readiness turns 503 while draining.
func TestOpsListener(t *testing.T) {
	noLeaks(t)
	dir := t.TempDir()
	ca, caKey := writeCA(t, dir)
	writeLeaf(t, dir, "server", ca, caKey, x509.ExtKeyUsageServerAuth)
	p := func(n string) string { return filepath.Join(dir, n) }
	h := startInProcess(t, Config{TLSCertFile: p("server.pem"), TLSKeyFile: p("server-key.pem"), TLSClientCAFile: p("ca.pem")})
	api := serveHTTP(t, h.s, false)
	ops := serveHTTP(t, h.s, true)
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	if resp, err := (&http.Client{Transport: tr}).Get("https://" + api + "/healthz"); err == nil {
		resp.Body.Close()
		t.Fatalf("API listener answered without a client certificate: %d", resp.StatusCode)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + ops + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ok", "/metrics": "preflight_memory_budget_bytes"} {
		if code, body := get(path); code != 200 || !strings.Contains(body, want) {
			t.Errorf("ops GET %s: %d %.200s", path, code, body)
		}
	}
	h.s.draining.Store(true)
	if code, _ := get("/readyz"); code != 503 {
		t.Errorf("ops /readyz while draining: %d, want 503", code)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("ops /healthz (liveness) while draining: %d, want 200", code)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestHostileUpstreams: http(s) sources that answer with absurd Retry-After values, fail, or say
// nothing get UNAVAILABLE naming the host, with a retry hint within 0..60 s, before the caller's
// deadline; a short Retry-After is waited for and the request succeeds.
func TestHostileUpstreams(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	compact := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	var busyOnce atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/retry-after-huge/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "9999999999")
		w.WriteHeader(503)
	})
	mux.HandleFunc("/retry-after-date/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", time.Now().AddDate(59, 0, 0).UTC().Format(http.TimeFormat))
		w.WriteHeader(429)
	})
	mux.HandleFunc("/busy-once/", func(w http.ResponseWriter, r *http.Request) {
		if !busyOnce.Swap(true) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
			return
		}
		w.Write(compact)
	})
	mux.HandleFunc("/error/", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/silent/", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/stall-body/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(compact)))
		w.Write(compact[:len(compact)/2])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	up := httptest.NewServer(mux)
	defer up.Close()
	host := strings.TrimPrefix(up.URL, "http://")
	h := startInProcess(t, Config{Allow: []string{up.URL}, EnableHTTPSources: true, UpstreamTimeout: 2 * time.Second})
	for _, tc := range []struct {
		path     string
		deadline time.Duration
		want     codes.Code
		msg      string
		retry    [2]time.Duration // bounds of the RetryInfo delay
		within   time.Duration
	}{
		{"/retry-after-huge/_metadata", 60 * time.Second, codes.Unavailable, "503", [2]time.Duration{60 * time.Second, 60 * time.Second}, 10 * time.Second},
		{"/retry-after-date/_metadata", 60 * time.Second, codes.Unavailable, "429", [2]time.Duration{59 * time.Second, 60 * time.Second}, 10 * time.Second},
		{"/error/_metadata", 60 * time.Second, codes.Unavailable, "500", [2]time.Duration{time.Second, 60 * time.Second}, 10 * time.Second},
		{"/silent/_metadata", 60 * time.Second, codes.Unavailable, "sent nothing", [2]time.Duration{0, 60 * time.Second}, 10 * time.Second},
		{"/stall-body/_metadata", 60 * time.Second, codes.Unavailable, "sent nothing", [2]time.Duration{0, 60 * time.Second}, 10 * time.Second},
		{"/busy-once/_metadata", 60 * time.Second, codes.OK, "", [2]time.Duration{}, 10 * time.Second},
	} {
		t.Run(strings.Trim(tc.path, "/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.deadline)
			defer cancel()
			start := time.Now()
			_, err := h.c.Check(ctx, uriReq(up.URL+tc.path, nil, nil))
			took := time.Since(start)
			if status.Code(err) != tc.want {
				t.Fatalf("%v, want %v", err, tc.want)
			}
			if took > tc.within {
				t.Errorf("answered after %v, want within %v", took, tc.within)
			}
			if tc.want == codes.OK {
				return
			}
			m := status.Convert(err).Message()
			if !strings.Contains(m, host) || !strings.Contains(m, tc.msg) {
				t.Errorf("message %q does not name the host %s and %q", m, host, tc.msg)
			}
			if d := retryDelay(err); d < tc.retry[0] || d > tc.retry[1] {
				t.Errorf("RetryInfo delay %v, want within %v", d, tc.retry)
			}
		})
	}
	// A silent upstream and a caller deadline shorter than the upstream timeout: the upstream is
	// given up before the caller's deadline, so the caller learns UNAVAILABLE naming the host,
	// not DEADLINE_EXCEEDED.
	h2 := startInProcess(t, Config{Allow: []string{up.URL}, EnableHTTPSources: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := h2.c.Check(ctx, uriReq(up.URL+"/silent/_metadata", nil, nil))
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), host) {
		t.Errorf("silent upstream within a 3 s deadline: %v, want Unavailable naming %s", err, host)
	}
}

// TestHostileRelativePath: errors for a relative path show it as given, never the daemon's
// working directory.
func TestHostileRelativePath(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("ckpts/job-1", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("ckpts/job-1/_metadata", readFile(t, filepath.Join(td, "compact-sink", "_metadata")), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startInProcess(t, Config{Allow: []string{"ckpts"}})
	ctx := context.Background()
	for _, tc := range []struct {
		uri  string
		want codes.Code
	}{
		{"ckpts/missing", codes.NotFound},
		{"elsewhere/_metadata", codes.PermissionDenied},
		{"./ckpts/job-1/nope/_metadata", codes.NotFound},
		{"ckpts/job-1", codes.OK},
	} {
		rep, err := h.c.Check(ctx, uriReq(tc.uri, nil, nil))
		if status.Code(err) != tc.want {
			t.Errorf("%s: %v, want %v", tc.uri, err, tc.want)
		}
		shown := status.Convert(err).Message() + rep.GetCheckpoint().GetSource()
		if strings.Contains(shown, dir) {
			t.Errorf("%s: %q shows the working directory %s", tc.uri, shown, dir)
		}
	}
}

// TestAdmissionMixedWaiters: a request for a free slot is not held behind an upload waiting for
// memory.
func TestAdmissionMixedWaiters(t *testing.T) {
	cfg := Config{MaxConcurrent: 2, MemoryBudget: 10 << 20, PeerShare: 1, QueueWait: 5 * time.Second}
	a := newAdmission(&cfg, newLayoutCache(1, 1<<20), newMetrics(prometheus.NewRegistry()))
	ctx := peerCtx("10.0.0.1:1")
	held, err := a.acquire(ctx, false, 8<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		g, err := a.acquire(ctx, false, 4<<20, true) // does not fit until held is released
		g.release()
		waiting <- err
	}()
	waitFor(t, func() bool { a.mu.Lock(); defer a.mu.Unlock(); return a.waiters.Len() == 1 })
	start := time.Now()
	slot, err := a.acquire(ctx, true, 0, false)
	if err != nil || time.Since(start) > time.Second {
		t.Fatalf("slot beside a memory waiter: %v after %v", err, time.Since(start))
	}
	slot.release()
	held.release()
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
}
