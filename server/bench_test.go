package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// BenchmarkUpload measures CheckRescaleUpload in process (bufconn): client chunking, gRPC
// framing, decode while receiving, and the check, on the 1.3 MB Kafka example.
func BenchmarkUpload(b *testing.B) {
	body := readFile(b, filepath.Join(testdataDir(b), "kafka-orphan-union", "_metadata"))
	s, err := New(Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	conn, _ := testutil.DialBufconn(b, s.ServeGRPC)
	c := client.New(conn)
	defer c.Close()
	plan := &pb.RescalePlan{DefaultParallelism: 8}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Upload(context.Background(), bytes.NewReader(body), &pb.UploadHeader{Plan: plan}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPCheck measures POST /v1/check through the HTTP handler (JSON decode, the
// gateway's call into the gRPC server, the check, JSON encode), with the 1.3 MB Kafka example
// inline (base64) and by path.
func BenchmarkHTTPCheck(b *testing.B) {
	td := testdataDir(b)
	body := readFile(b, filepath.Join(td, "kafka-orphan-union", "_metadata"))
	s, err := New(Config{Logger: slog.New(slog.DiscardHandler), Allow: []string{td}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := s.HTTPHandler()
	for _, bc := range []struct {
		name string
		json []byte
		size int
	}{
		{"inline", []byte(`{"checkpoint":{"metadata":"` + base64.StdEncoding.EncodeToString(body) + `"},"plan":{"defaultParallelism":8}}`), len(body)},
		{"uri", []byte(`{"checkpoint":{"uri":"` + filepath.Join(td, "kafka-orphan-union") + `"},"plan":{"defaultParallelism":8}}`), len(body)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(bc.size))
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/check", bytes.NewReader(bc.json)))
				if rec.Code != http.StatusOK {
					b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
