package main

// The native load generator of (a): a closed loop of -c callers in this process, over -gen-conns
// shared gRPC connections, each caller sending its next request as soon as the previous one has
// answered. It exists because ghz, on the same two cores as the daemon, spends several times the
// daemon's CPU on every request (dynamic messages, per-request reporting), so ghz's own cost sets
// the RPS it measures (bench/README.md, "(a) with a native load generator"). This generator
// keeps its per-request work to the gRPC call itself:
//
//   - the request is encoded once; in the default "raw" codec the response is not decoded but
//     compared byte for byte with the reference answer (decoded and checked once before the run:
//     the verdict the plan must give), so a wrong answer still fails the run;
//   - with -gen-codec=pb the generated client (pb.NewPreflightServiceClient) decodes every answer,
//     as a real caller does, to show what decoding costs;
//   - latencies go to a slice allocated before the run; percentiles are computed after it;
//   - its garbage collector runs at -gen-gogc (400): a collection pauses the callers and would
//     count against the daemon's latency;
//   - its own CPU is getrusage(RUSAGE_SELF) around the run (nothing else runs in this process
//     meanwhile), the daemon's /proc/PID/stat, both divided by the requests.
//
// Everything is bounded: a timeout per request, a total deadline per run (-step-timeout), and
// the first error ends the run with that error (the benchmark fails loudly, it does not count).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// genCall is one kind of request the generator sends.
type genCall struct {
	name   string        // for logs and errors
	method string        // full gRPC method, "/service/Method"
	req    proto.Message // the request, encoded once
	// check validates the decoded reference answer (the verdict a plan must give).
	check func(proto.Message) error
	// newResp is a fresh response message for the generated client's decoding.
	newResp func() proto.Message
}

// echoCall is grpc.health.v1.Health/Check, which must answer SERVING.
func echoCall() genCall {
	return genCall{
		name: "Health/Check", method: "/grpc.health.v1.Health/Check", req: &healthpb.HealthCheckRequest{},
		check: func(m proto.Message) error {
			if s := m.(*healthpb.HealthCheckResponse).GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
				return fmt.Errorf("health status %v", s)
			}
			return nil
		},
		newResp: func() proto.Message { return &healthpb.HealthCheckResponse{} },
	}
}

// checkCall is CheckRescale of req, which must answer with verdict want.
func checkCall(name string, req *pb.CheckRescaleRequest, want pb.Verdict) genCall {
	return genCall{
		name: name, method: "/preflight.v1.PreflightService/CheckRescale", req: req,
		check: func(m proto.Message) error {
			if v := m.(*pb.CheckRescaleResponse).GetReport().GetVerdict(); v != want {
				return fmt.Errorf("verdict %v, want %v", v, want)
			}
			return nil
		},
		newResp: func() proto.Message { return &pb.CheckRescaleResponse{} },
	}
}

// loadResult is what one run of a generator measured (ghz's or the native one's).
type loadResult struct {
	count, errors   int64
	wall            time.Duration
	rps             float64
	p50, p99, p999  time.Duration // -1 when the generator does not report it
	genCPU          time.Duration // the generator process's user + system CPU; -1 unknown
	daemonCPU       time.Duration
	errDistribution map[string]int64
}

// cpuPerRequest formats the daemon's and the generator's CPU time per request.
func (r *loadResult) cpuPerRequest(gen string) string {
	per := func(d time.Duration) string {
		if r.count == 0 || d < 0 {
			return "?"
		}
		return fmt.Sprintf("%.0f µs", float64(d)/float64(r.count)/1e3)
	}
	return per(r.daemonCPU) + " daemon / " + per(r.genCPU) + " " + gen
}

// rusageCPU is this process's user + system CPU time so far.
func rusageCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawMsg is a message already on the wire: an encoded request, or a response to compare.
type rawMsg struct {
	b    []byte // the request's encoding, or the reference answer
	same bool   // set by Unmarshal: the answer equals b
	got  []byte // set by Unmarshal when it does not: a copy of the answer
}

// rawCodec sends pre-encoded requests and compares answers with the reference without
// decoding them (the buffers are read in place, not copied).
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(*rawMsg).b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m := v.(*rawMsg)
	rest := m.b
	m.same = data.Len() == len(rest)
	for _, buf := range data {
		if !m.same {
			break
		}
		b := buf.ReadOnlyData()
		m.same = bytes.Equal(b, rest[:len(b)])
		rest = rest[len(b):]
	}
	if !m.same {
		m.got = data.Materialize()
	}
	return nil
}

// nativeGen runs the native generator against a daemon.
type nativeGen struct {
	conns   []*grpc.ClientConn
	codec   string        // "raw" or "pb"
	timeout time.Duration // per request
}

func newNativeGen(addr string, conns int, codec string, timeout time.Duration) (*nativeGen, error) {
	if codec != "raw" && codec != "pb" {
		return nil, fmt.Errorf("-gen-codec %q: want raw or pb", codec)
	}
	g := &nativeGen{codec: codec, timeout: timeout}
	for range max(1, conns) {
		// Each NewClient is its own HTTP/2 connection (no sharing between ClientConns).
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			g.close()
			return nil, err
		}
		g.conns = append(g.conns, c)
	}
	return g, nil
}

func (g *nativeGen) close() {
	for _, c := range g.conns {
		c.Close()
	}
}

// reference asks c once with the generated client's codec, checks the answer and returns its
// wire encoding, the bytes every later answer must equal.
func (g *nativeGen) reference(ctx context.Context, c genCall) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	resp := c.newResp()
	if err := g.conns[0].Invoke(ctx, c.method, c.req, resp); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	if err := c.check(resp); err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	return proto.Marshal(resp)
}

// run sends warmup requests, then n requests measured, at concurrency conc, all within deadline.
func (g *nativeGen) run(ctx context.Context, c genCall, conc, n, warmup int, daemonCPU func() time.Duration) (*loadResult, error) {
	want, err := g.reference(ctx, c)
	if err != nil {
		return nil, err
	}
	reqBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.req)
	if err != nil {
		return nil, err
	}
	if warmup > 0 {
		if _, err := g.loop(ctx, c, conc, warmup, want, reqBytes, nil); err != nil {
			return nil, fmt.Errorf("%s warm-up: %w", c.name, err)
		}
	}
	lat := make([]time.Duration, n)
	d0, cpu0 := daemonCPU(), rusageCPU()
	wall, err := g.loop(ctx, c, conc, n, want, reqBytes, lat)
	cpu1, d1 := rusageCPU(), daemonCPU()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.name, err)
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	r := &loadResult{count: int64(n), wall: wall, rps: float64(n) / wall.Seconds(),
		p50: pct(0.50), p99: pct(0.99), p999: pct(0.999), genCPU: cpu1 - cpu0, daemonCPU: d1 - d0}
	if cpu0 < 0 || cpu1 < 0 {
		r.genCPU = -1
	}
	if d0 < 0 || d1 < 0 {
		r.daemonCPU = -1
	}
	return r, nil
}

// errWrongAnswer is an answer whose bytes differ from the reference and that does not decode to
// an equal message.
var errWrongAnswer = errors.New("answer differs from the reference answer")

// sameAnswer is the slow path of the raw codec's comparison: an answer whose bytes differ from
// the reference may still be the same message (proto encodings are not unique).
func sameAnswer(c genCall, want, got []byte) error {
	a, b := c.newResp(), c.newResp()
	if proto.Unmarshal(want, a) != nil || proto.Unmarshal(got, b) != nil || !proto.Equal(a, b) {
		return errWrongAnswer
	}
	return nil
}

// loop is the closed loop: conc callers take request numbers 0..n-1 in turn; caller i uses
// connection i mod len(conns). lat (nil in the warm-up) receives each request's latency at its
// number. The first error stops every caller.
func (g *nativeGen) loop(ctx context.Context, c genCall, conc, n int, want, reqBytes []byte, lat []time.Duration) (time.Duration, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range min(conc, n) {
		conn := g.conns[w%len(g.conns)]
		wg.Go(func() {
			raw := &rawMsg{b: want}
			req := &rawMsg{b: reqBytes}
			forceRaw := grpc.ForceCodecV2(rawCodec{})
			var api pb.PreflightServiceClient
			var health healthpb.HealthClient
			if g.codec == "pb" {
				api, health = pb.NewPreflightServiceClient(conn), healthpb.NewHealthClient(conn)
			}
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				rctx, cancel := context.WithTimeout(ctx, g.timeout)
				t0 := time.Now()
				var err error
				switch {
				case g.codec == "raw":
					err = conn.Invoke(rctx, c.method, req, raw, forceRaw)
					if err == nil && !raw.same {
						err = sameAnswer(c, want, raw.got)
					}
				case c.method == "/grpc.health.v1.Health/Check":
					var resp *healthpb.HealthCheckResponse
					if resp, err = health.Check(rctx, c.req.(*healthpb.HealthCheckRequest)); err == nil {
						err = c.check(resp)
					}
				default:
					var resp *pb.CheckRescaleResponse
					if resp, err = api.CheckRescale(rctx, c.req.(*pb.CheckRescaleRequest)); err == nil {
						err = c.check(resp)
					}
				}
				d := time.Since(t0)
				cancel()
				if err != nil {
					stop(fmt.Errorf("request %d: %w", i, err))
					return
				}
				if lat != nil {
					lat[i] = d
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return wall, err
	}
	if done := next.Load(); done < int64(n) {
		return wall, fmt.Errorf("only %d of %d requests sent", done, n)
	}
	return wall, nil
}
