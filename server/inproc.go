package server

import (
	"context"
	"io"
	"math"
	"net"
	"net/netip"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// The HTTP gateway calls the gRPC server through an in-process connection (as etcd does): the
// generated grpc-gateway handler is a gRPC client of a pipe that the gRPC server serves like
// any listener. HTTP callers thus pass the very interceptors gRPC callers do, and nothing is
// forwarded by hand. The pipe needs no TLS (serverCreds lets it through, and only it), and the
// HTTP client's address travels in httpPeerKey metadata, which only pipe connections may set.

// httpPeerKey is the metadata key carrying the HTTP client's address ("ip:port") on gateway calls.
const httpPeerKey = "preflight-http-peer"

// inprocListener is a net.Listener of in-memory connections, dialled only by this process.
type inprocListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newInprocListener() *inprocListener {
	return &inprocListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *inprocListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *inprocListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *inprocListener) Addr() net.Addr { return inprocAddr{} }

// dial connects to the listener; the server gets the *inprocConn end.
func (l *inprocListener) dial(ctx context.Context, _ string) (net.Conn, error) {
	a, b := newPipe()
	select {
	case l.conns <- &inprocConn{b}:
		return a, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type inprocAddr struct{}

func (inprocAddr) Network() string { return "inproc" }
func (inprocAddr) String() string  { return "inproc" }

// inprocConn marks the server's end of a gateway connection; nothing from the network is one.
type inprocConn struct{ *pipeConn }

// pipeConn is one end of an in-memory, buffered, full-duplex connection. Unlike net.Pipe, a
// write never waits for the reader (HTTP/2 flow control bounds what is buffered), so the two
// HTTP/2 endpoints cannot block each other writing at the same time. Deadlines are accepted and
// ignored: a pipe cannot stall the way a network can, and the calls it carries have their own.
type pipeConn struct {
	r, w *pipeBuffer
}

func newPipe() (*pipeConn, *pipeConn) {
	ab, ba := newPipeBuffer(), newPipeBuffer()
	return &pipeConn{r: ba, w: ab}, &pipeConn{r: ab, w: ba}
}

func (c *pipeConn) Read(p []byte) (int, error)  { return c.r.read(p) }
func (c *pipeConn) Write(p []byte) (int, error) { return c.w.write(p) }

// Close ends both directions: the peer reads EOF after what was written, and writes fail.
func (c *pipeConn) Close() error {
	c.r.close()
	c.w.close()
	return nil
}

func (c *pipeConn) LocalAddr() net.Addr                { return inprocAddr{} }
func (c *pipeConn) RemoteAddr() net.Addr               { return inprocAddr{} }
func (c *pipeConn) SetDeadline(t time.Time) error      { return nil }
func (c *pipeConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *pipeConn) SetWriteDeadline(t time.Time) error { return nil }

type pipeBuffer struct {
	mu     sync.Mutex
	ready  sync.Cond
	buf    []byte // unread bytes are buf[off:]
	off    int
	closed bool
}

// maxKeptBuffer is the largest buffer a drained pipe keeps for the next writes.
const maxKeptBuffer = 1 << 20

func newPipeBuffer() *pipeBuffer {
	b := &pipeBuffer{}
	b.ready.L = &b.mu
	return b
}

func (b *pipeBuffer) read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.off == len(b.buf) && !b.closed {
		b.ready.Wait()
	}
	if b.off == len(b.buf) {
		return 0, io.EOF
	}
	n := copy(p, b.buf[b.off:])
	b.off += n
	if b.off == len(b.buf) {
		// Drained: reuse the array for the next writes, unless a burst made it large.
		b.buf, b.off = b.buf[:0], 0
		if cap(b.buf) > maxKeptBuffer {
			b.buf = nil
		}
	}
	return n, nil
}

func (b *pipeBuffer) write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, net.ErrClosed
	}
	if b.off > 0 && len(b.buf)+len(p) > cap(b.buf) {
		// Move the unread bytes to the front before growing.
		b.buf = b.buf[:copy(b.buf, b.buf[b.off:])]
		b.off = 0
	}
	b.buf = append(b.buf, p...)
	b.ready.Broadcast()
	return len(p), nil
}

func (b *pipeBuffer) close() {
	b.mu.Lock()
	b.closed = true
	b.ready.Broadcast()
	b.mu.Unlock()
}

// serverCreds are the gRPC server's transport credentials: TLS (or none) for network
// connections as configured, and no handshake for the gateway's pipe, whose calls are marked
// with inprocAuthInfo (the mark httpPeer trusts).
type serverCreds struct {
	credentials.TransportCredentials // TLS, or insecure when the server has no certificate
}

type inprocAuthInfo struct{ credentials.CommonAuthInfo }

func (inprocAuthInfo) AuthType() string { return "inproc" }

func (c serverCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if _, ok := conn.(*inprocConn); ok {
		return conn, inprocAuthInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
	}
	return c.TransportCredentials.ServerHandshake(conn)
}

func (c serverCreds) Clone() credentials.TransportCredentials {
	return serverCreds{c.TransportCredentials.Clone()}
}

func newServerCreds(tlsCreds credentials.TransportCredentials) serverCreds {
	if tlsCreds == nil {
		tlsCreds = insecure.NewCredentials()
	}
	return serverCreds{tlsCreds}
}

// dialInproc connects the gateway to the server's pipe. Sizes are the server's to limit (its
// MaxRecvMsgSize applies to gateway calls as to any), so the client side sets none.
func dialInproc(l *inprocListener) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///preflightd-inproc",
		grpc.WithContextDialer(l.dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)),
	)
}

// fromHTTP makes a gateway call's peer the HTTP client (httpPeerKey), so that admission's
// per-peer fairness and the log line see who called rather than the pipe. Only calls arriving
// through the pipe are rewritten; for any other the key is ignored, so that a gRPC client cannot
// pose as another address (and the gateway does not forward an HTTP header to that key).
func fromHTTP(ctx context.Context) context.Context {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ctx
	}
	if _, inproc := p.AuthInfo.(inprocAuthInfo); !inproc {
		return ctx
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(httpPeerKey)
	if len(vals) != 1 {
		return ctx
	}
	ap, err := netip.ParseAddrPort(vals[0])
	if err != nil {
		return ctx
	}
	return peer.NewContext(ctx, &peer.Peer{Addr: net.TCPAddrFromAddrPort(ap), LocalAddr: p.LocalAddr, AuthInfo: p.AuthInfo})
}

func httpPeerUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return handler(fromHTTP(ctx), req)
}

func httpPeerStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	ctx := ss.Context()
	if c := fromHTTP(ctx); c != ctx {
		ss = &wrappedStream{ss, c}
	}
	return handler(srv, ss)
}
