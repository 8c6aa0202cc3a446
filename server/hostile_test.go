package server

// Hostile-input and fault suite: many concurrent requests against an in-process server, a fifth
// of them hostile (oversized, truncated, corrupted, cancelled midway, outside the allowlist,
// absurd parallelism). Every hostile request must get the code callers branch on, every good
// request exactly the answer a sequential reference call gave, health must stay SERVING, and
// goroutines and heap must come back to their baseline. A second test kills the S3 server in the
// middle of a run and starts it again.
//
// PREFLIGHT_HOSTILE_N sets the number of requests (default 2,000; e.g. 10000 for a longer run).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/source/s3test"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const (
	hostileDefaultN  = 2000
	hostileWorkers   = 16
	hostileShare     = 5 // one request in hostileShare is hostile (20%)
	hostileMaxUpload = 2 << 20
	hostileMaxInline = 256 << 10
	hostileRunBudget = 3 * time.Minute // whole-run bound, far above the expected few seconds
	hostileCallLimit = 30 * time.Second
	hostileHeapSlack = 16 << 20 // heap after the run may exceed the baseline by this much
	hostileMaxErrors = 20       // failures reported in full; the rest are counted
)

func hostileN(t *testing.T) int {
	t.Helper()
	v := os.Getenv("PREFLIGHT_HOSTILE_N")
	if v == "" {
		if testing.Short() {
			return hostileDefaultN / 5
		}
		return hostileDefaultN
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("PREFLIGHT_HOSTILE_N=%q: want a positive integer", v)
	}
	return n
}

// hostileCase is one kind of request. Good cases (and mutated files, whose answer is whatever the
// codec says, as long as it says it consistently) are compared with a sequential reference call;
// hostile cases must fail with want.
type hostileCase struct {
	name string
	call func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error)
	// hostile: the code the request must get (and, if set, a substring of the message).
	want codes.Code
	msg  string
	// reference: the outcome must equal the sequential reference (set in the reference pass).
	reference bool
	ref       outcome
}

// failures collects concurrent failures, reporting the first few in full.
type failures struct {
	t *testing.T
	n atomic.Int64
}

func (f *failures) errorf(format string, args ...any) {
	if f.n.Add(1) <= hostileMaxErrors {
		f.t.Errorf(format, args...)
	}
}

// TestHostileMix runs hostileN requests, 20% hostile, through 16 concurrent workers.
func TestHostileMix(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	n := hostileN(t)

	// An allowlisted folder with traps in it, and a folder outside the allowlist holding a
	// perfectly valid checkpoint (so an escape would answer OK instead of PERMISSION_DENIED).
	root := t.TempDir()
	allowDir, outside := filepath.Join(root, "allow"), filepath.Join(root, "outside")
	compact := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	kafka := readFile(t, filepath.Join(td, "kafka-orphan-union", "_metadata"))
	writeMeta := func(dir string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "_metadata"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeMeta(outside, compact)
	writeMeta(filepath.Join(allowDir, "huge"), bytes.Repeat(kafka, 2)) // over MaxUploadBytes
	writeMeta(filepath.Join(allowDir, "truncated"), compact[:len(compact)/2])
	for name, target := range map[string]string{"escape": outside, "passwd": "/etc/passwd", "escape-file": filepath.Join(outside, "_metadata")} {
		if err := os.Symlink(target, filepath.Join(allowDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	allow := []string{td, allowDir}
	if d := corpusDir(); d != "" {
		allow = append(allow, d)
	}
	h := startInProcess(t, Config{
		Allow:          allow,
		MaxUploadBytes: hostileMaxUpload,
		MaxInlineBytes: hostileMaxInline,
		// 16 workers on 2×GOMAXPROCS slots: requests queue instead of being shed, so that every
		// answer is the real one (shedding has its own test, TestConcurrencyLimit).
		QueueWait: hostileCallLimit,
	})

	cases := append(goodCases(t), hostileCases(t, td, allowDir, compact, kafka)...)
	var good, bad []*hostileCase
	for _, c := range cases {
		if c.want == codes.OK {
			good = append(good, c)
		} else {
			bad = append(bad, c)
		}
	}

	// Reference pass: one call at a time.
	ctx, cancel := context.WithTimeout(context.Background(), hostileRunBudget)
	defer cancel()
	for _, c := range cases {
		if !c.reference {
			continue
		}
		cctx, ccancel := context.WithTimeout(ctx, hostileCallLimit)
		c.ref = newOutcome(c.call(cctx, h.c))
		ccancel()
		switch {
		case c.want == codes.OK && c.ref.code != "OK" && strings.HasPrefix(c.name, "compact-sink"):
			t.Fatalf("%s: reference call failed: %s", c.name, c.ref)
		case c.want == codes.Unknown && c.ref.code != "OK" && c.ref.code != codes.InvalidArgument.String():
			// A mutated file is either still a checkpoint or INVALID_ARGUMENT, never an internal
			// error (a codec panic or an unmapped error).
			t.Errorf("%s: reference answer %s, want OK or InvalidArgument", c.name, c.ref)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// Cross-check: inline and upload agree with the URI (the reference is not path-dependent).
	refs := map[string]outcome{}
	for _, c := range good {
		base, _, _ := strings.Cut(c.name, " via ")
		if r, ok := refs[base]; ok && !r.equal(c.ref) {
			t.Errorf("%s: reference %s differs from another path's %s", c.name, c.ref.brief(), r.brief())
		}
		refs[base] = c.ref
	}

	// Baselines, taken with the server up and its layout cache warm.
	baseG := runtime.NumGoroutine()
	baseHeap := heapAfterGC()

	// The request mix: exactly every hostileShare-th request is hostile, the order shuffled
	// with a fixed seed.
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	plan := make([]*hostileCase, n)
	for i := range plan {
		if i%hostileShare == 0 {
			plan[i] = bad[(i/hostileShare)%len(bad)]
		} else {
			plan[i] = good[(i-i/hostileShare-1)%len(good)]
		}
	}
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })

	// Health is polled throughout; every answer must be SERVING.
	health := pollHealth(ctx, h.c, 10*time.Millisecond, func(err error) { t.Errorf("health during the run: %v", err) })

	f := &failures{t: t}
	var hostileSeen, goodSeen atomic.Int64
	work := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range hostileWorkers {
		wg.Go(func() {
			for i := range work {
				c := plan[i]
				cctx, ccancel := context.WithTimeout(ctx, hostileCallLimit)
				rep, err := c.call(cctx, h.c)
				ccancel()
				got := newOutcome(rep, err)
				if c.want == codes.OK {
					goodSeen.Add(1)
				} else {
					hostileSeen.Add(1)
				}
				switch {
				case c.reference:
					if !got.equal(c.ref) {
						f.errorf("request %d (%s): %s\nwant the reference %s", i, c.name, got.brief()+" "+got.msg, c.ref.brief()+" "+c.ref.msg)
					}
				case status.Code(err) != c.want || !strings.Contains(status.Convert(err).Message(), c.msg):
					f.errorf("request %d (%s): %v, want %v containing %q", i, c.name, err, c.want, c.msg)
				}
			}
		})
	}
feed:
	for i := range plan {
		select {
		case work <- i:
		case <-ctx.Done():
			t.Errorf("run budget of %v exhausted after %d requests", hostileRunBudget, i)
			break feed
		}
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	healthChecks, healthBad := health.stop()
	if f.n.Load() > hostileMaxErrors {
		t.Errorf("... and %d more failures", f.n.Load()-hostileMaxErrors)
	}
	if healthChecks == 0 {
		t.Error("health was never checked during the run")
	}
	if err := h.c.Health(ctx); err != nil {
		t.Errorf("health after the run: %v", err)
	}

	// Every goroutine a request started has ended (the server and the client connection remain).
	var nowG int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if nowG = runtime.NumGoroutine(); nowG <= baseG {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("goroutines: %d after the run, %d before", nowG, baseG)
			break
		}
	}
	// Nothing a request allocated is retained: the heap returns to within hostileHeapSlack of
	// its baseline.
	heap := heapAfterGC()
	if heap > baseHeap+hostileHeapSlack {
		t.Errorf("heap after the run %.1f MiB, before %.1f MiB: more than %d MiB retained", mib(heap), mib(baseHeap), hostileHeapSlack>>20)
	}
	t.Logf("%d requests (%d hostile, %d good) by %d workers in %v (%.0f req/s; race detector %v); %d case kinds (%d hostile); health checked %d times, %d not SERVING; goroutines %d → %d; heap %.1f → %.1f MiB",
		n, hostileSeen.Load(), goodSeen.Load(), hostileWorkers, took.Round(time.Millisecond), float64(n)/took.Seconds(), raceEnabled,
		len(cases), len(bad), healthChecks, healthBad, baseG, nowG, mib(baseHeap), mib(heap))
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// heapAfterGC is the live heap after two collections (the second empties sync.Pool victims).
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func uriReq(uri string, plan *pb.RescalePlan, opts *pb.CheckOptions) *pb.CheckRescaleRequest {
	return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: uri}}, Plan: plan, Options: opts}
}

func inlineReq(b []byte, plan *pb.RescalePlan, opts *pb.CheckOptions) *pb.CheckRescaleRequest {
	return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: b}}, Plan: plan, Options: opts}
}

// goodCases are the shared scenarios plus plans at the edges of the valid range, each by URI
// (path and file://), inline (when under the inline limit) and upload.
func goodCases(t *testing.T) []*hostileCase {
	t.Helper()
	scs := checkScenarios(t)
	td := testdataDir(t)
	cs := filepath.Join(td, "compact-sink", "_metadata")
	scs = append(scs,
		scenario{"compact-sink/default=0 (keep)", cs, &pb.RescalePlan{DefaultParallelism: 0}, nil},
		scenario{"compact-sink/default=1", cs, &pb.RescalePlan{DefaultParallelism: 1}, nil},
		// Far above the max parallelism (128) of compact-operator: PF110. (32768 is valid too, but
		// simulating 32768 subtasks costs many times a normal check: too slow for a mix of
		// thousands under the race detector; bench/README.md, "Hostile-input and fault suite".)
		scenario{"compact-sink/default=1000", cs, &pb.RescalePlan{DefaultParallelism: 1000}, nil},
		scenario{"compact-sink/no plan", cs, nil, nil},
	)
	var out []*hostileCase
	for _, sc := range scs {
		body := readFile(t, sc.path)
		out = append(out,
			&hostileCase{name: sc.name + " via uri", reference: true, call: func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
				return c.Check(ctx, uriReq(sc.path, sc.plan, sc.opts))
			}},
			&hostileCase{name: sc.name + " via upload", reference: true, call: func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
				return c.Upload(ctx, bytes.NewReader(body), &pb.UploadHeader{Plan: sc.plan, Options: sc.opts, SizeBytes: int64(len(body))})
			}})
		if strings.HasPrefix(sc.name, "compact-sink") {
			out = append(out, &hostileCase{name: sc.name + " via file-uri", reference: true, call: func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
				return c.Check(ctx, uriReq("file://"+filepath.Dir(sc.path), sc.plan, sc.opts))
			}})
		}
		if len(body) <= hostileMaxInline {
			out = append(out, &hostileCase{name: sc.name + " via inline", reference: true, call: func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
				return c.Check(ctx, inlineReq(body, sc.plan, sc.opts))
			}})
		}
	}
	return out
}

// hostileCases are the attacks and accidents, each with the code it must get.
func hostileCases(t *testing.T, td, allowDir string, compact, kafka []byte) []*hostileCase {
	t.Helper()
	deny8 := &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}
	check := func(req *pb.CheckRescaleRequest) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
		return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) { return c.Check(ctx, req) }
	}
	upload := func(b []byte, size int64) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
		return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
			return c.Upload(ctx, bytes.NewReader(b), &pb.UploadHeader{Plan: deny8, SizeBytes: size})
		}
	}
	csURI := filepath.Join(td, "compact-sink")
	out := []*hostileCase{
		// Size limits.
		{name: "inline over the inline limit", call: check(inlineReq(kafka, deny8, nil)), want: codes.ResourceExhausted, msg: "inline"},
		{name: "inline over the gRPC receive limit", call: check(inlineReq(make([]byte, 4<<20+1), nil, nil)), want: codes.ResourceExhausted},
		{name: "upload announcing an oversized file", call: upload(nil, hostileMaxUpload+1), want: codes.ResourceExhausted, msg: "limit"},
		{name: "upload growing past the limit", call: upload(bytes.Repeat(kafka, 2), 0), want: codes.ResourceExhausted, msg: "limit"},
		{name: "uri of a file over the limit", call: check(uriReq(filepath.Join(allowDir, "huge"), nil, nil)), want: codes.ResourceExhausted},
		// Malformed bytes.
		{name: "truncated file by uri", call: check(uriReq(filepath.Join(allowDir, "truncated"), nil, nil)), want: codes.InvalidArgument},
		{name: "bad magic inline", call: check(inlineReq(append([]byte("PK\x03\x04"), compact[4:]...), nil, nil)), want: codes.InvalidArgument},
		{name: "bad magic upload", call: upload(append([]byte{0xde, 0xad, 0xbe, 0xef}, compact[4:]...), 0), want: codes.InvalidArgument},
		{name: "empty upload", call: upload(nil, 0), want: codes.InvalidArgument},
		{name: "empty inline", call: check(inlineReq([]byte{}, nil, nil)), want: codes.InvalidArgument},
		// Streams cut short or misused.
		{name: "upload cancelled midway", call: cancelledUpload(compact, false), want: codes.Canceled},
		{name: "upload past its deadline midway", call: cancelledUpload(compact, true), want: codes.DeadlineExceeded},
		{name: "upload without a header", call: rawUpload(nil, compact), want: codes.InvalidArgument, msg: "header"},
		{name: "upload sending more than its size_bytes", call: upload(compact, int64(len(compact))-7), want: codes.InvalidArgument, msg: "announced"},
		{name: "upload sending less than its size_bytes", call: upload(compact, int64(len(compact))+7), want: codes.InvalidArgument, msg: "announced"},
		{name: "upload with a negative size_bytes", call: upload(compact, -1), want: codes.InvalidArgument, msg: "negative"},
		{name: "upload with a second header", call: rawUpload(&pb.UploadHeader{}, compact[:100], &pb.UploadHeader{}), want: codes.InvalidArgument, msg: "second header"},
		// Sources outside the allowlist, or nowhere.
		{name: "dot-dot out of the allowlist", call: check(uriReq(allowDir+"/../outside/_metadata", nil, nil)), want: codes.PermissionDenied},
		{name: "symlinked folder out of the allowlist", call: check(uriReq(filepath.Join(allowDir, "escape"), nil, nil)), want: codes.PermissionDenied},
		{name: "symlinked file out of the allowlist", call: check(uriReq(filepath.Join(allowDir, "escape-file"), nil, nil)), want: codes.PermissionDenied},
		{name: "symlink to /etc/passwd", call: check(uriReq(filepath.Join(allowDir, "passwd"), nil, nil)), want: codes.PermissionDenied},
		{name: "file:///etc/passwd", call: check(uriReq("file:///etc/passwd", nil, nil)), want: codes.PermissionDenied},
		{name: "http source while disabled", call: check(uriReq("http://127.0.0.1:1/x", nil, nil)), want: codes.PermissionDenied, msg: "disabled"},
		{name: "missing checkpoint", call: check(uriReq(filepath.Join(allowDir, "missing"), nil, nil)), want: codes.NotFound},
		{name: "unknown scheme", call: check(uriReq("ftp://host/_metadata", nil, nil)), want: codes.InvalidArgument},
		{name: "no checkpoint at all", call: check(&pb.CheckRescaleRequest{}), want: codes.InvalidArgument},
		// Absurd parallelism.
		{name: "default parallelism -1", call: check(uriReq(csURI, &pb.RescalePlan{DefaultParallelism: -1}, nil)), want: codes.InvalidArgument, msg: "parallelism"},
		{name: "default parallelism MinInt32", call: check(uriReq(csURI, &pb.RescalePlan{DefaultParallelism: math.MinInt32}, nil)), want: codes.InvalidArgument, msg: "parallelism"},
		{name: "default parallelism 32769", call: check(uriReq(csURI, &pb.RescalePlan{DefaultParallelism: 32769}, nil)), want: codes.InvalidArgument, msg: "parallelism"},
		{name: "operator parallelism -5", call: check(uriReq(csURI, &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": -5}}, nil)), want: codes.InvalidArgument, msg: "parallelism"},
		{name: "operator parallelism MaxInt32", call: check(uriReq(csURI, &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": math.MaxInt32}}, nil)), want: codes.InvalidArgument, msg: "parallelism"},
		{name: "upload with parallelism 40000", call: func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
			return c.Upload(ctx, bytes.NewReader(compact), &pb.UploadHeader{Plan: &pb.RescalePlan{DefaultParallelism: 40000}})
		}, want: codes.InvalidArgument, msg: "parallelism"},
	}
	// Truncations at fixed points, inline and uploaded: always malformed.
	for _, cut := range []int{1, 3, 8, 64, len(compact) / 3, len(compact) / 2, len(compact) - 100, len(compact) - 1} {
		b := compact[:cut]
		out = append(out,
			&hostileCase{name: fmt.Sprintf("truncated at %d inline", cut), call: check(inlineReq(b, deny8, nil)), want: codes.InvalidArgument},
			&hostileCase{name: fmt.Sprintf("truncated at %d upload", cut), call: upload(b, int64(len(compact))), want: codes.InvalidArgument})
	}
	// Mutated files (seeded byte flips): whatever the codec answers (OK or INVALID_ARGUMENT),
	// it must answer the same under load as alone. want Unknown marks "compare with reference".
	rng := rand.New(rand.NewPCG(42, 7))
	for i := range 24 {
		b := bytes.Clone(compact)
		for range 1 + i%4 {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		call := check(inlineReq(b, deny8, nil))
		mode := "inline"
		if i%2 == 1 {
			call, mode = upload(b, 0), "upload"
		}
		out = append(out, &hostileCase{name: fmt.Sprintf("mutated #%d %s", i, mode), call: call, want: codes.Unknown, reference: true})
	}
	return out
}

// cancelledUpload sends the header and half of b, then cancels (or lets the deadline pass) with
// the stream open.
func cancelledUpload(b []byte, deadline bool) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
	return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
		var cancel context.CancelFunc
		if deadline {
			ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
		} else {
			ctx, cancel = context.WithCancel(ctx)
		}
		defer cancel()
		stream, err := pb.NewPreflightServiceClient(c.Conn()).CheckRescaleUpload(ctx)
		if err != nil {
			return nil, err
		}
		if err := stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: &pb.UploadHeader{SizeBytes: int64(len(b))}}}); err != nil && err != io.EOF {
			return nil, err
		}
		if err := stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Chunk{Chunk: b[:len(b)/2]}}); err != nil && err != io.EOF {
			return nil, err
		}
		if deadline {
			<-ctx.Done()
		} else {
			cancel()
		}
		resp, err := stream.CloseAndRecv()
		return resp.GetReport(), err
	}
}

// rawUpload sends an optional header, a chunk, then optional extra headers, bypassing the
// client's framing.
func rawUpload(header *pb.UploadHeader, chunk []byte, extra ...*pb.UploadHeader) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
	return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
		stream, err := pb.NewPreflightServiceClient(c.Conn()).CheckRescaleUpload(ctx)
		if err != nil {
			return nil, err
		}
		msgs := []*pb.CheckRescaleUploadRequest{}
		if header != nil {
			msgs = append(msgs, &pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: header}})
		}
		msgs = append(msgs, &pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Chunk{Chunk: chunk}})
		for _, x := range extra {
			msgs = append(msgs, &pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: x}})
		}
		for _, m := range msgs {
			if err := stream.Send(m); err != nil {
				break // the server has answered; CloseAndRecv has its status
			}
		}
		resp, err := stream.CloseAndRecv()
		return resp.GetReport(), err
	}
}

// TestHostileS3Outage kills the S3 server while workers check a checkpoint stored in it:
// requests made while it is down get UNAVAILABLE with a RetryInfo hint, and once it is back the
// same requests succeed with the same answer as before. Health stays SERVING throughout (an
// unreachable store is not the server's own failure).
func TestHostileS3Outage(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	g := s3test.Start(t) // skips without versitygw, fails under CI=true
	g.CreateBucket(t, "ckpts")
	g.Put(t, "ckpts", "flink/chk-1/_metadata", bytes.NewReader(readFile(t, filepath.Join(td, "compact-sink", "_metadata"))))
	// The phases judge every request against the store's state, so the file version is
	// revalidated on every request (the default interval would serve cached answers for up to
	// 1 s into the outage, by design; TestE2ES3 covers that bound).
	h := startInProcess(t, Config{Allow: []string{g.BucketURL("ckpts")}, QueueWait: hostileCallLimit, RevalidateInterval: -1})
	ctx, cancel := context.WithTimeout(context.Background(), hostileRunBudget)
	defer cancel()
	req := uriReq("s3://ckpts/flink/chk-1", &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}, nil)
	ref := newOutcome(h.c.Check(ctx, req))
	if ref.code != "OK" || ref.report.GetVerdict() != pb.Verdict_VERDICT_DENY {
		t.Fatalf("reference: %s", ref)
	}

	// Phases: a request is judged by the phase it started and ended in.
	const (
		up = iota
		stopping
		down
		restarting
		up2
	)
	var phase atomic.Int32
	type result struct {
		from, to int32
		out      outcome
		err      error
		took     time.Duration
	}
	results := make(chan result, 4096)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// While the store is down, each answer takes seconds (the S3 client's own retries), so that
	// phase waits for one UNAVAILABLE per worker only.
	const workers, perPhase, perDown = 8, 24, 8
	for range workers {
		wg.Go(func() {
			for range 2000 { // bounded; the controller stops the workers far earlier
				select {
				case <-stop:
					return
				default:
				}
				from, start := phase.Load(), time.Now()
				cctx, ccancel := context.WithTimeout(ctx, hostileCallLimit)
				rep, err := h.c.Check(cctx, req)
				ccancel()
				select {
				case results <- result{from, phase.Load(), newOutcome(rep, err), err, time.Since(start)}:
				case <-stop:
					return
				}
			}
		})
	}
	health := pollHealth(ctx, h.c, 20*time.Millisecond, nil)

	counts := map[int32]int{}
	var unavailable, okAfter int
	var unavailableTook time.Duration
	f := &failures{t: t}
	judge := func(r result) {
		counts[r.from]++
		span := fmt.Sprintf("phase %d→%d", r.from, r.to)
		switch {
		case r.from == r.to && (r.from == up || r.from == up2):
			if !r.out.equal(ref) {
				f.errorf("%s (store up): %s, want %s", span, r.out, ref.brief())
			}
			if r.from == up2 {
				okAfter++
			}
		case r.from == r.to && r.from == down:
			if status.Code(r.err) != codes.Unavailable {
				f.errorf("%s (store down): %v, want Unavailable", span, r.err)
				return
			}
			unavailable++
			unavailableTook += r.took
			if d := retryDelay(r.err); d <= 0 {
				f.errorf("%s: UNAVAILABLE without a RetryInfo delay: %v", span, status.Convert(r.err).Proto())
			}
		default: // across a transition: either answer, nothing else
			if r.out.code != "OK" && status.Code(r.err) != codes.Unavailable {
				f.errorf("%s (transition): %v, want OK or Unavailable", span, r.err)
			} else if r.out.code == "OK" && !r.out.equal(ref) {
				f.errorf("%s (transition): %s, want %s", span, r.out, ref.brief())
			}
		}
	}
	// collect judges results until cond holds (or the phase budget runs out).
	collect := func(what string, budget time.Duration, cond func() bool) {
		timeout := time.After(budget)
		for !cond() {
			select {
			case r := <-results:
				judge(r)
			case <-timeout:
				t.Errorf("%s: not reached within %v (per phase: %v)", what, budget, counts)
				return
			}
		}
	}
	var took [5]time.Duration
	t0 := time.Now()
	collect("requests with the store up", 60*time.Second, func() bool { return counts[up] >= perPhase })
	took[up], t0 = time.Since(t0), time.Now()
	phase.Store(stopping)
	g.Stop()
	took[stopping], t0 = time.Since(t0), time.Now()
	phase.Store(down)
	collect("requests with the store down", 90*time.Second, func() bool { return unavailable >= perDown })
	took[down], t0 = time.Since(t0), time.Now()
	phase.Store(restarting)
	restartGateway(t, g)
	took[restarting], t0 = time.Since(t0), time.Now()
	phase.Store(up2)
	collect("requests after the store came back", 60*time.Second, func() bool { return okAfter >= perPhase })
	took[up2] = time.Since(t0)
	close(stop)
	wg.Wait()
	close(results)
	for r := range results {
		judge(r)
	}
	if _, healthBad := health.stop(); healthBad > 0 {
		t.Errorf("health was not SERVING %d times", healthBad)
	}
	t.Logf("requests per starting phase (0 up, 1 stopping, 2 down, 3 restarting, 4 up again): %v; phase durations %v; %d UNAVAILABLE with RetryInfo, answered after %v on average", counts, took, unavailable, (unavailableTook / time.Duration(max(unavailable, 1))).Round(time.Millisecond))
}

func retryDelay(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// restartGateway starts versitygw again on the stopped gateway's address and folder (its data
// survives), the way s3test.Start runs it, and stops it at cleanup.
func restartGateway(t *testing.T, g *s3test.Gateway) {
	t.Helper()
	cmd := exec.Command(s3test.Require(t), "--port", g.Addr, "posix", g.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s3test.AccessKey, "ROOT_SECRET_KEY="+s3test.SecretKey)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", g.Addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("versitygw exited on restart: %s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw did not listen again on %s: %s", g.Addr, log.String())
		}
	}
}

// healthPoll asks the server's health every interval until stop; every answer must be SERVING.
type healthPoll struct {
	done        chan struct{}
	wg          sync.WaitGroup
	checks, bad atomic.Int64
}

// pollHealth starts polling; onBad, if not nil, is told of each failed check.
func pollHealth(ctx context.Context, c *client.Client, every time.Duration, onBad func(error)) *healthPoll {
	p := &healthPoll{done: make(chan struct{})}
	p.wg.Go(func() {
		for {
			select {
			case <-p.done:
				return
			case <-time.After(every):
			}
			hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
			err := c.Health(hctx)
			hcancel()
			p.checks.Add(1)
			if err != nil {
				p.bad.Add(1)
				if onBad != nil {
					onBad(err)
				}
			}
		}
	})
	return p
}

// stop ends the polling and returns the checks made and those that failed.
func (p *healthPoll) stop() (checks, bad int64) {
	close(p.done)
	p.wg.Wait()
	return p.checks.Load(), p.bad.Load()
}
