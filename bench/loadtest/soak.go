package main

// The soak (-soak): one preflightd with its default admission (slots, 1 s queue, memory budget),
// N requests at concurrency C, a fifth of them hostile: oversized, truncated, stalled and
// cancelled uploads, size_bytes that lie, URIs outside the allowlist, absurd parallelism and
// plans with huge counts. Good requests must all answer OK with the reference verdict (no
// RESOURCE_EXHAUSTED without reason), hostile ones the code callers branch on. Goroutines (from
// the daemon's ops /metrics) and RSS are read before and after; the soak fails if goroutines do
// not come back to their baseline, memory reserved under the budget does not come back to zero,
// or the RSS at rest after the run exceeds the peak RSS of its first half by more than soakRSSSlack.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/client"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const (
	// --upload-idle-timeout of the soak's daemon: the default. The timeout runs between messages
	// (the client sends 1 MiB chunks), and on a loaded machine a chunk on the one connection 50
	// streams share can wait longer than a shorter timeout allows: shorter ones cut good
	// uploads (bench/README.md, "Soak (d)").
	soakIdleTimeout = 30 * time.Second
	soakMaxUpload   = 4 << 20 // --max-upload-bytes, so that "oversized" is cheap to send
	soakCallLimit   = 30 * time.Second
	soakGoroutines  = 5 // goroutines after the run may exceed the baseline by this many
	// The run has two halves. A leak grows with requests, so the RSS at rest after the run must
	// stay within this much of the peak RSS of the first half (comparing with the fresh daemon
	// would count the heap Go keeps after a burst and returns to the OS only slowly).
	soakRSSSlack = 32 << 20
)

type soakCase struct {
	name    string
	hostile bool
	want    []codes.Code // allowed codes (OK only for good cases)
	call    func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error)
}

func soakCases(o options, allow string) ([]*soakCase, error) {
	ex := filepath.Join(o.work, "examples")
	compactPath := filepath.Join(ex, "compact-sink", "_metadata")
	compact, err := os.ReadFile(compactPath)
	if err != nil {
		return nil, err
	}
	kafka, err := os.ReadFile(filepath.Join(ex, "kafka-orphan-union", "_metadata"))
	if err != nil {
		return nil, err
	}
	deny8 := &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}
	uri := func(u string, plan *pb.RescalePlan) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
		return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
			return c.Check(ctx, &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: u}}, Plan: plan})
		}
	}
	upload := func(b []byte, size int64, plan *pb.RescalePlan) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
		return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
			return c.Upload(ctx, bytes.NewReader(b), &pb.UploadHeader{Plan: plan, SizeBytes: size})
		}
	}
	inline := func(b []byte, plan *pb.RescalePlan) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
		return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
			return c.Check(ctx, &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: b}}, Plan: plan})
		}
	}
	hugePlan := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
	for i := range 20000 {
		hugePlan.VertexParallelism[fmt.Sprintf("no-such-operator-%d", i)] = 2
	}
	ok := []codes.Code{codes.OK}
	invalid := []codes.Code{codes.InvalidArgument}
	return []*soakCase{
		{name: "check by URI (cached)", want: ok, call: uri(compactPath, deny8)},
		{name: "check by folder URI", want: ok, call: uri(filepath.Dir(compactPath), deny8)},
		{name: "upload", want: ok, call: upload(compact, int64(len(compact)), deny8)},
		{name: "upload of unknown size", want: ok, call: upload(compact, 0, deny8)},
		{name: "inline", want: ok, call: inline(compact, deny8)},
		{name: "kafka union upload", want: ok, call: upload(kafka, int64(len(kafka)), &pb.RescalePlan{DefaultParallelism: 8})},

		{name: "oversized upload (announced)", hostile: true, want: []codes.Code{codes.ResourceExhausted}, call: upload(nil, soakMaxUpload+1, nil)},
		{name: "oversized upload (streamed)", hostile: true, want: []codes.Code{codes.ResourceExhausted}, call: upload(bytes.Repeat(kafka, 4), 0, nil)},
		{name: "truncated upload", hostile: true, want: invalid, call: upload(compact[:len(compact)/2], int64(len(compact)/2), deny8)},
		{name: "size_bytes lies", hostile: true, want: invalid, call: upload(compact, int64(len(compact))+100, deny8)},
		{name: "stalled upload", hostile: true, want: []codes.Code{codes.DeadlineExceeded}, call: stalled(compact)},
		{name: "cancelled upload", hostile: true, want: []codes.Code{codes.Canceled}, call: cancelled(compact)},
		{name: "URI outside the allowlist", hostile: true, want: []codes.Code{codes.PermissionDenied}, call: uri("/etc/passwd", nil)},
		{name: "URI with ..", hostile: true, want: []codes.Code{codes.PermissionDenied}, call: uri(allow+"/../../etc/passwd", nil)},
		{name: "http URI while disabled", hostile: true, want: []codes.Code{codes.PermissionDenied}, call: uri("http://127.0.0.1:1/_metadata", nil)},
		{name: "parallelism MaxInt32", hostile: true, want: invalid, call: uri(compactPath, &pb.RescalePlan{DefaultParallelism: math.MaxInt32})},
		{name: "plan with 20000 operators", hostile: true, want: []codes.Code{codes.OK, codes.InvalidArgument}, call: uri(compactPath, hugePlan)},
	}, nil
}

// stalled sends the header and a third of the file, then nothing, until the server ends it.
func stalled(b []byte) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
	return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
		stream, err := pb.NewPreflightServiceClient(c.Conn()).CheckRescaleUpload(ctx)
		if err != nil {
			return nil, err
		}
		stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: &pb.UploadHeader{SizeBytes: int64(len(b))}}})
		stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Chunk{Chunk: b[:len(b)/3]}})
		return nil, stream.RecvMsg(new(pb.CheckRescaleUploadResponse))
	}
}

// cancelled sends half the file, then cancels.
func cancelled(b []byte) func(context.Context, *client.Client) (*pb.RescaleReport, error) {
	return func(ctx context.Context, c *client.Client) (*pb.RescaleReport, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := pb.NewPreflightServiceClient(c.Conn()).CheckRescaleUpload(ctx)
		if err != nil {
			return nil, err
		}
		stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: &pb.UploadHeader{SizeBytes: int64(len(b))}}})
		stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Chunk{Chunk: b[:len(b)/2]}})
		time.Sleep(5 * time.Millisecond)
		cancel()
		_, err = stream.CloseAndRecv()
		if err == io.EOF {
			err = status.Error(codes.Canceled, "cancelled")
		}
		return nil, err
	}
}

type soakResult struct {
	requests, hostile, wrong, goodRefused int64
	took                                  time.Duration
	goroutinesBefore, goroutinesAfter     float64
	rssBefore, rssHalf, rssAfter, hwm     int64
	hwmHalf                               int64
	reservedAfter                         float64
	codes                                 map[string]int64
	examples                              []string // the first wrong answers
}

// soak runs the soak and returns its table rows; an error if anything was wrong or leaked.
func soak(o options) ([]row, error) {
	allow := filepath.Join(o.work, "examples")
	d, err := startDaemon(o, nil, "--allow="+allow, "--http-addr=127.0.0.1:0", "--ops-addr=127.0.0.1:0",
		fmt.Sprintf("--upload-idle-timeout=%v", soakIdleTimeout), fmt.Sprintf("--max-upload-bytes=%d", soakMaxUpload))
	if err != nil {
		return nil, err
	}
	defer d.Stop()
	cases, err := soakCases(o, allow)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, d.GRPCAddr, client.Options{Insecure: true})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	plan, good := soakPlan(cases, o.soakN)
	// Warm up (layout cache, connection, runtime), then take the baselines at rest.
	for range 3 {
		for _, sc := range good {
			if _, err := sc.call(ctx, c); err != nil {
				return nil, fmt.Errorf("warm-up %s: %w", sc.name, err)
			}
		}
	}
	time.Sleep(time.Second)
	res := &soakResult{codes: map[string]int64{}, requests: int64(len(plan))}
	res.goroutinesBefore = d.ops("go_goroutines")
	res.rssBefore = d.status("VmRSS")
	runSoak(ctx, d, c, plan, o.conc, res)
	settle(d, res)
	return soakReport(res, o.conc)
}

// soakPlan is n requests, every fifth hostile, shuffled with a fixed seed; and the good cases.
func soakPlan(cases []*soakCase, n int) (plan, good []*soakCase) {
	var bad []*soakCase
	for _, c := range cases {
		if c.hostile {
			bad = append(bad, c)
		} else {
			good = append(good, c)
		}
	}
	plan = make([]*soakCase, n)
	for i := range plan {
		if i%5 == 0 {
			plan[i] = bad[(i/5)%len(bad)]
		} else {
			plan[i] = good[i%len(good)]
		}
	}
	rand.New(rand.NewPCG(7, uint64(n))).Shuffle(n, func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	return plan, good
}

// runSoak sends plan at concurrency conc, pausing at half time to measure RSS at rest, and
// records codes, wrong answers and refusals in res.
func runSoak(ctx context.Context, d *daemon, c *client.Client, plan []*soakCase, conc int, res *soakResult) {
	var mu sync.Mutex
	var wrong, goodRefused, hostile atomic.Int64
	work := make(chan *soakCase)
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for sc := range work {
				cctx, ccancel := context.WithTimeout(ctx, soakCallLimit)
				rep, err := sc.call(cctx, c)
				ccancel()
				code := status.Code(err)
				if sc.hostile {
					hostile.Add(1)
				}
				bad := !slices.Contains(sc.want, code) || (code == codes.OK && !sc.hostile && rep.GetVerdict() == pb.Verdict_VERDICT_UNSPECIFIED)
				mu.Lock()
				res.codes[code.String()]++
				if bad && len(res.examples) < 10 {
					res.examples = append(res.examples, fmt.Sprintf("%s: %v", sc.name, err))
				}
				mu.Unlock()
				if bad {
					wrong.Add(1)
				}
				if !sc.hostile && code == codes.ResourceExhausted {
					goodRefused.Add(1)
				}
			}
		})
	}
	half, resume := make(chan struct{}), make(chan struct{})
	go func() {
		for i, sc := range plan {
			if i > 0 && i%1000 == 0 {
				logf("soak: %d/%d requests, goroutines %v, RSS %d MiB", i, len(plan), d.ops("go_goroutines"), d.status("VmRSS")>>20)
			}
			if i == len(plan)/2 {
				close(half)
				<-resume
			}
			work <- sc
		}
		close(work)
	}()
	// At half time: let the requests in flight finish (workers idle on the channel), rest, and
	// measure RSS at rest.
	<-half
	for time.Sleep(time.Second); d.ops("preflight_memory_reserved_bytes") != 0 || d.ops("preflight_uploads_receiving") != 0; time.Sleep(500 * time.Millisecond) {
		if time.Since(start) > 10*time.Minute {
			break
		}
	}
	res.rssHalf, res.hwmHalf = d.status("VmRSS"), d.status("VmHWM")
	logf("soak: half time, RSS at rest %d MiB, peak so far %d MiB", res.rssHalf>>20, res.hwmHalf>>20)
	close(resume)
	wg.Wait() // the workers end once the feeder has closed work
	res.took = time.Since(start)
	res.hostile, res.wrong, res.goodRefused = hostile.Load(), wrong.Load(), goodRefused.Load()
	res.hwm = d.status("VmHWM")
}

// settle waits for the daemon to be back at rest and takes the after-run measurements:
// goroutines must return to the baseline (stalled uploads end after the idle timeout; give them
// several).
func settle(d *daemon, res *soakResult) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		res.goroutinesAfter = d.ops("go_goroutines")
		if res.goroutinesAfter <= res.goroutinesBefore+soakGoroutines || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(soakIdleTimeout + time.Second)
	res.rssAfter = d.status("VmRSS")
	res.reservedAfter = d.ops("preflight_memory_reserved_bytes")
}

// soakReport is the soak's table rows, and an error naming everything wrong or leaked.
func soakReport(res *soakResult, conc int) ([]row, error) {
	n := res.requests
	var codesSeen []string
	for k, v := range res.codes {
		codesSeen = append(codesSeen, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(codesSeen)
	logf("soak: %d requests (%d hostile) at c=%d in %v; codes: %s", n, res.hostile, conc, res.took.Round(time.Millisecond), strings.Join(codesSeen, ", "))
	leakG := res.goroutinesAfter > res.goroutinesBefore+soakGoroutines
	leakRSS := res.rssAfter > res.hwmHalf+soakRSSSlack
	rows := []row{
		{fmt.Sprintf("(d) soak, %d requests at c=%d, %d%% hostile", n, conc, 100*res.hostile/max(res.requests, 1)), "wall / req/s", fmt.Sprintf("%v / %.0f", res.took.Round(time.Millisecond), float64(n)/res.took.Seconds()), "", ""},
		{"(d) soak", "wrong answers / good requests refused", fmt.Sprintf("%d / %d", res.wrong, res.goodRefused), "0 / 0", yes(res.wrong == 0 && res.goodRefused == 0)},
		{"(d) soak", "goroutines before → after", fmt.Sprintf("%.0f → %.0f", res.goroutinesBefore, res.goroutinesAfter), fmt.Sprintf("≤ +%d", soakGoroutines), yes(!leakG)},
		{"(d) soak", "RSS at rest: before → half time → after (peak: first half, whole run)", fmt.Sprintf("%d → %d → %d MiB (peak %d, %d MiB)", res.rssBefore>>20, res.rssHalf>>20, res.rssAfter>>20, res.hwmHalf>>20, res.hwm>>20), fmt.Sprintf("after ≤ first-half peak + %d MiB", soakRSSSlack>>20), yes(!leakRSS)},
		{"(d) soak", "memory reserved after", fmt.Sprintf("%.0f bytes", res.reservedAfter), "0", yes(res.reservedAfter == 0)},
		{"(d) soak", "codes", strings.Join(codesSeen, ", "), "", ""},
	}
	var errs []error
	if res.wrong > 0 {
		errs = append(errs, fmt.Errorf("%d wrong answers, e.g. %s", res.wrong, strings.Join(res.examples, "; ")))
	}
	if res.goodRefused > 0 {
		errs = append(errs, fmt.Errorf("%d good requests got RESOURCE_EXHAUSTED", res.goodRefused))
	}
	if leakG {
		errs = append(errs, fmt.Errorf("goroutine leak: %.0f before, %.0f after", res.goroutinesBefore, res.goroutinesAfter))
	}
	if leakRSS {
		errs = append(errs, fmt.Errorf("RSS at rest after the run %d MiB, above the first half's peak %d MiB + %d MiB", res.rssAfter>>20, res.hwmHalf>>20, soakRSSSlack>>20))
	}
	if res.reservedAfter != 0 {
		errs = append(errs, fmt.Errorf("%.0f bytes still reserved under the memory budget after the run", res.reservedAfter))
	}
	return rows, errors.Join(errs...)
}
