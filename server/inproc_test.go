package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/metadata"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// logLine returns the JSON log line of the RPC with request ID id.
func logLine(t *testing.T, h *harness, id string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, `"msg":"rpc"`) && strings.Contains(l, `"request_id":"`+id+`"`) {
			var entry map[string]any
			if err := json.Unmarshal([]byte(l), &entry); err != nil {
				t.Fatal(err)
			}
			return entry
		}
	}
	t.Fatalf("no rpc log line for request %s in:\n%s", id, h.logs.String())
	return nil
}

// TestGatewayThroughGRPC: an HTTP call reaches the service through the gRPC server (its
// interceptors log and count it), with the HTTP client as the peer; the peer cannot be forged,
// neither by an HTTP header nor by a gRPC caller's metadata.
func TestGatewayThroughGRPC(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	h := startInProcess(t, Config{Allow: []string{td}})
	method := pb.PreflightService_CheckRescale_FullMethodName
	before := testutil.ToFloat64(h.s.metrics.rpcs.WithLabelValues(method, "OK"))

	body := `{"checkpoint":{"uri":"` + filepath.Join(td, "compact-sink") + `"}}`
	req := httptest.NewRequest(http.MethodPost, "/v1/check", strings.NewReader(body))
	req.RemoteAddr = "192.0.2.7:4242"
	req.Header.Set("X-Request-Id", "peer-http")
	req.Header.Set("Grpc-Metadata-"+httpPeerKey, "10.6.6.6:1") // forged: must be ignored
	rec := httptest.NewRecorder()
	h.s.HTTPHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	entry := logLine(t, h, "peer-http")
	if entry["peer"] != "192.0.2.7:4242" || entry["method"] != method || entry["code"] != "OK" {
		t.Errorf("log line of the HTTP call: %v", entry)
	}
	if got := testutil.ToFloat64(h.s.metrics.rpcs.WithLabelValues(method, "OK")); got != before+1 {
		t.Errorf("rpc counter %v → %v, want one more", before, got)
	}

	ctx := metadata.AppendToOutgoingContext(context.Background(), RequestIDHeader, "peer-grpc", httpPeerKey, "10.6.6.6:1")
	api := pb.NewPreflightServiceClient(h.c.Conn())
	if _, err := api.CheckRescale(ctx, &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Join(td, "compact-sink")}}}); err != nil {
		t.Fatal(err)
	}
	if p := logLine(t, h, "peer-grpc")["peer"]; p == "10.6.6.6:1" {
		t.Errorf("a gRPC caller chose its peer address: %v", p)
	}
}

// TestHTTPCancelReachesHandler: an HTTP client going away cancels the call in the gRPC server
// (here, while it waits for an upstream that never answers).
func TestHTTPCancelReachesHandler(t *testing.T) {
	noLeaks(t)
	started := make(chan struct{}, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-r.Context().Done()
	}))
	defer upstream.Close()
	h := startInProcess(t, Config{Allow: []string{upstream.URL}, EnableHTTPSources: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"checkpoint":{"uri":"` + upstream.URL + `/chk-1/_metadata"}}`
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/check", strings.NewReader(body))
	req.Header.Set("X-Request-Id", "gone")
	done := make(chan struct{})
	go func() { h.s.HTTPHandler().ServeHTTP(httptest.NewRecorder(), req); close(done) }()
	<-started
	cancel()
	<-done
	waitFor(t, func() bool { return strings.Contains(h.logs.String(), `"request_id":"gone"`) })
	if c := logLine(t, h, "gone")["code"]; c != "Canceled" {
		t.Errorf("code %v, want Canceled", c)
	}
}

// TestPipe: both ends write at once without waiting for the other to read (HTTP/2 endpoints do),
// bytes arrive in order, and Close gives the peer EOF after what was written.
func TestPipe(t *testing.T) {
	a, b := newPipe()
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var wg sync.WaitGroup
	for _, c := range []*pipeConn{a, b} {
		wg.Go(func() {
			if _, err := c.Write(msg); err != nil {
				t.Error(err)
			}
			c.w.close() // half-close: the peer reads EOF after msg
		})
	}
	wg.Wait() // neither write waited for a reader
	for _, c := range []*pipeConn{a, b} {
		got, err := io.ReadAll(c)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("read %d bytes, %v", len(got), err)
		}
	}
	a.Close()
	if _, err := a.Write([]byte("x")); err == nil {
		t.Error("write after Close succeeded")
	}
}
