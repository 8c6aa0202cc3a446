package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/flinkpreflight/preflight/client"
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
	lis := bufconn.Listen(1 << 20)
	go s.ServeGRPC(lis)
	defer s.Close()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
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
