package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// serveHarnessHTTP serves h's HTTP handler on a real loopback listener (read deadlines, chunked bodies
// and connection handling are those of net/http, not of a recorder).
func serveHarnessHTTP(t *testing.T, h *harness) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { h.s.ServeHTTPListener(l); close(done) }()
	t.Cleanup(func() { h.s.Close(); <-done })
	return "http://" + l.Addr().String()
}

func postUpload(t *testing.T, base, query string, body io.Reader, contentLength int64) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+UploadPath+query, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = contentLength
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func TestHTTPUploadMatchesGRPCUpload(t *testing.T) {
	h := startInProcess(t, Config{})
	base := serveHarnessHTTP(t, h)
	path := filepath.Join(testdataDir(t), "compact-sink", "_metadata")
	meta := readFile(t, path)
	tests := []struct {
		name, query string
		plan        *pb.RescalePlan
		opts        *pb.CheckOptions
		verdict     pb.Verdict
	}{
		{"compact-operator=8", "?set=compact-operator=8", &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}, &pb.CheckOptions{}, pb.Verdict_VERDICT_DENY},
		{"stored parallelism", "", &pb.RescalePlan{}, &pb.CheckOptions{}, pb.Verdict_VERDICT_ALLOW},
		{"all options", "?set=compact-operator=2&parallelism=4&flinkVersion=1.19.1&failOn=warning&frameSize=10MiB&includeSubtasks=true&name=x",
			&pb.RescalePlan{DefaultParallelism: 4, VertexParallelism: map[string]int32{"compact-operator": 2}},
			&pb.CheckOptions{FlinkVersion: "1.19.1", FailLevel: pb.Severity_SEVERITY_WARNING, RpcFrameSizeBytes: 10 << 20, IncludeSubtasks: true}, pb.Verdict_VERDICT_UNSPECIFIED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := postUpload(t, base, tt.query, bytes.NewReader(meta), int64(len(meta)))
			if code != http.StatusOK {
				t.Fatalf("HTTP %d: %s", code, body)
			}
			if hdr.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id in the response")
			}
			var got pb.CheckRescaleUploadResponse
			if err := protojson.Unmarshal(body, &got); err != nil {
				t.Fatalf("decoding %s: %v", body, err)
			}
			want, err := h.c.Upload(context.Background(), bytes.NewReader(meta), &pb.UploadHeader{Plan: tt.plan, Options: tt.opts})
			if g, w := newOutcome(got.GetReport(), nil), newOutcome(want, err); !g.equal(w) {
				t.Fatalf("HTTP upload and gRPC upload differ:\nHTTP %s\ngRPC %s", g.brief(), w.brief())
			}
			if tt.verdict != pb.Verdict_VERDICT_UNSPECIFIED && got.GetReport().GetVerdict() != tt.verdict {
				t.Errorf("verdict %v, want %v", got.GetReport().GetVerdict(), tt.verdict)
			}
		})
	}
	// The README's curl example: DENY naming FLINK-31689.
	_, _, body := postUpload(t, base, "?set=compact-operator=8", bytes.NewReader(meta), -1)
	if !strings.Contains(string(body), `"verdict":"VERDICT_DENY"`) || !strings.Contains(string(body), "FLINK-31689") {
		t.Fatalf("chunked upload of compact-sink at 8: %.400s", body)
	}
	if !strings.Contains(h.logs.String(), `"method":"/preflight.v1.PreflightService/CheckRescaleUpload"`) {
		t.Error("the HTTP upload left no RPC log line")
	}
}

func TestHTTPUploadRefusals(t *testing.T) {
	h := startInProcess(t, Config{MaxUploadBytes: 4 << 10})
	base := serveHarnessHTTP(t, h)
	big := bytes.Repeat([]byte{0}, 64<<10)
	tests := []struct {
		name     string
		method   string
		query    string
		body     io.Reader
		length   int64
		wantHTTP int
		wantBody string
	}{
		{"announced oversize", http.MethodPost, "", bytes.NewReader(big), int64(len(big)), http.StatusRequestEntityTooLarge, `"code":8`},
		{"chunked oversize", http.MethodPost, "", io.MultiReader(bytes.NewReader(big)), -1, http.StatusRequestEntityTooLarge, "exceeds the limit of 4096 bytes"},
		{"unknown parameter", http.MethodPost, "?paralelism=4", strings.NewReader("x"), 1, http.StatusBadRequest, `unknown query parameter \"paralelism\"`},
		{"bad set", http.MethodPost, "?set=compact-operator", strings.NewReader("x"), 1, http.StatusBadRequest, "want KEY=PARALLELISM"},
		{"bad size", http.MethodPost, "?frameSize=huge", strings.NewReader("x"), 1, http.StatusBadRequest, "invalid size"},
		{"malformed metadata", http.MethodPost, "", strings.NewReader("not a checkpoint"), 16, http.StatusBadRequest, "MetadataFormatError"},
		{"empty body", http.MethodPost, "", http.NoBody, 0, http.StatusBadRequest, "empty upload: no _metadata bytes were sent"},
		{"empty chunked body", http.MethodPost, "", io.MultiReader(), -1, http.StatusBadRequest, "empty upload"},
		{"GET", http.MethodGet, "", nil, 0, http.StatusMethodNotAllowed, "takes POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+UploadPath+tt.query, tt.body)
			req.ContentLength = tt.length
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantHTTP || !strings.Contains(string(b), tt.wantBody) {
				t.Fatalf("HTTP %d %.300s; want %d containing %q", resp.StatusCode, b, tt.wantHTTP, tt.wantBody)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
		})
	}
}

// TestHTTPUploadSlowClient: a client that sends a few bytes and stalls is cut by the rate guard
// (408) long before the request timeout, and its check slot is freed.
func TestHTTPUploadSlowClient(t *testing.T) {
	h := startInProcess(t, Config{UploadMinRate: 1 << 10, UploadRateGrace: 200 * time.Millisecond, MaxConcurrent: 1, RequestTimeout: 5 * time.Minute})
	base := serveHarnessHTTP(t, h)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n", UploadPath)
	conn.Write([]byte{0x4a, 0x60}) // two bytes, then nothing
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled upload after %s: %v", time.Since(start), err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "upload too slow") {
		t.Fatalf("HTTP %d %s; want 408 upload too slow", resp.StatusCode, b)
	}
	// net/http cancels the request context when the read deadline cuts the body, so the RPC log
	// line may say Canceled rather than DeadlineExceeded; the caller gets 408 either way.
	if logs := h.logs.String(); !strings.Contains(logs, `"code":"DeadlineExceeded"`) && !strings.Contains(logs, `"code":"Canceled"`) {
		t.Errorf("no RPC log line for the cut upload:\n%s", logs)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the stall was cut after %s; the rate guard should act within seconds", d)
	}
	// The only slot is free again: a normal upload passes.
	meta := readFile(t, filepath.Join(testdataDir(t), "compact-sink", "_metadata"))
	if code, _, body := postUpload(t, base, "", bytes.NewReader(meta), int64(len(meta))); code != http.StatusOK {
		t.Fatalf("after the slow client: HTTP %d %s", code, body)
	}
}

// TestHTTPErrorHeaders: an HTTP error carries no gRPC transport header (gRPC's own
// content-type, application/grpc, said nothing about the JSON answer).
func TestHTTPErrorHeaders(t *testing.T) {
	base := serveHarnessHTTP(t, startInProcess(t, Config{}))
	resp, err := http.Post(base+"/v1/check", "application/json", strings.NewReader(`{"checkpoint":{"uri":"/nowhere/_metadata"}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode < 400 {
		t.Fatalf("HTTP %d, want an error", resp.StatusCode)
	}
	if v := resp.Header.Get("Grpc-Metadata-Content-Type"); v != "" {
		t.Errorf("Grpc-Metadata-Content-Type: %q", v)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestHTTPUploadBudget: an upload whose reservation can never fit the memory budget is answered
// 413, one that finds the budget held by others 429 with RetryInfo; both RESOURCE_EXHAUSTED
// naming --memory-budget, mapped from admission's typed refusals.
func TestHTTPUploadBudget(t *testing.T) {
	const budget = 3 << 20
	h := startInProcess(t, Config{MemoryBudget: budget, MaxUploadBytes: 1 << 20, QueueWait: 50 * time.Millisecond})
	base := serveHarnessHTTP(t, h)
	small := bytes.Repeat([]byte{0}, 1<<10)
	big := bytes.Repeat([]byte{0}, 512<<10) // 2 MiB + 4 × 512 KiB > 3 MiB
	code, _, body := postUpload(t, base, "", bytes.NewReader(big), int64(len(big)))
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "--memory-budget") || !strings.Contains(string(body), `"code":8`) {
		t.Errorf("an upload beyond the budget: HTTP %d %.300s, want 413 RESOURCE_EXHAUSTED naming --memory-budget", code, body)
	}
	g, err := h.s.adm.acquire(context.Background(), false, budget, false)
	if err != nil {
		t.Fatal(err)
	}
	code, _, body = postUpload(t, base, "", bytes.NewReader(small), int64(len(small)))
	g.release()
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "--memory-budget") || !strings.Contains(string(body), "RetryInfo") {
		t.Errorf("an upload while the budget is held: HTTP %d %.300s, want 429 with RetryInfo naming --memory-budget", code, body)
	}
}
