package testutil

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// DialBufconn runs serve (a gRPC server's Serve) on an in-memory listener and returns a client
// connection to it, closed when the test ends, and a channel closed when serve has returned
// (after the caller stops its server).
func DialBufconn(tb testing.TB, serve func(net.Listener) error, opts ...grpc.DialOption) (*grpc.ClientConn, <-chan struct{}) {
	tb.Helper()
	lis := bufconn.Listen(1 << 20)
	served := make(chan struct{})
	go func() { serve(lis); close(served) }()
	conn, err := grpc.NewClient("passthrough:///bufnet", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn, served
}
