package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/memmodel"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestOperatorHeavyBudget: a file of many small operator records needs far more memory than
// 4 × its size (bench/README.md, "Figures behind constants", PerOperator). Its check
// reserves the record counts' memory (memmodel.CheckExtraBytes) once the file is decoded: beyond the
// budget it is refused at once, naming the budget and the operators; four at once run within
// the budget, the ones that do not fit waiting for the others.
func TestOperatorHeavyBudget(t *testing.T) {
	noLeaks(t)
	file, layout := scenariotest.SyntheticLayout(t, scenarios.SyntheticOperators(20_000))
	size := int64(len(file))
	plan := &pb.RescalePlan{DefaultParallelism: 1}
	r := recordCounts(layout, plan, nil, false)
	need := memmodel.RequestBaseBytes + r.Bytes()
	t.Logf("20k operators: %d bytes of _metadata, file estimate %s, record estimate %s (%d operators, %d subtask records)",
		size, fmtBytes(memmodel.RequestBytes(size)), fmtBytes(need), r.Operators, r.SubtaskRecords)
	if need <= memmodel.RequestBytes(size) || memmodel.CheckExtraBytes(r, size) != need-memmodel.RequestBytes(size) {
		t.Fatalf("record estimate %d not above the file estimate %d", need, memmodel.RequestBytes(size))
	}
	// include_subtasks adds a row per new subtask: 20k rows at parallelism 1, 40k at 2;
	// subtask_operators a row per new subtask of the named operators; a check in pieces holds
	// none of them.
	for _, tc := range []struct {
		opts     *pb.CheckOptions
		inPieces bool
		want     int64
	}{
		{&pb.CheckOptions{IncludeSubtasks: true}, false, 40_000},
		{&pb.CheckOptions{SubtaskOperators: []string{layout.Operators[0].ID.String(), layout.Operators[1].ID.String()}}, false, 4},
		{&pb.CheckOptions{IncludeSubtasks: true}, true, 0},
	} {
		r := recordCounts(layout, &pb.RescalePlan{DefaultParallelism: 2}, tc.opts, tc.inPieces)
		if r.Rows != tc.want || r.InPieces != tc.inPieces {
			t.Errorf("%v at parallelism 2, in pieces %v: %d rows (in pieces %v), want %d", tc.opts, tc.inPieces, r.Rows, r.InPieces, tc.want)
		}
	}
	ctx := context.Background()

	// The file's estimate fits, its check does not: refused once decoded, naming both.
	h := startInProcess(t, Config{MemoryBudget: memmodel.RequestBytes(size) + need/2, QueueWait: 100 * time.Millisecond})
	_, err := h.c.Upload(ctx, bytes.NewReader(file), &pb.UploadHeader{SizeBytes: size, Plan: plan})
	if msg := status.Convert(err).Message(); status.Code(err) != codes.ResourceExhausted ||
		!strings.Contains(msg, "20000 operators") || !strings.Contains(msg, "--memory-budget") {
		t.Fatalf("check beyond the budget: %v, want RESOURCE_EXHAUSTED naming the operators and --memory-budget", err)
	}
	if used := testutil.ToFloat64(h.s.metrics.memReserved); used != 0 {
		t.Errorf("%v bytes still reserved after the refusal", used)
	}

	// Four at once under a budget that holds two checks: each answers, and the reservations
	// never pass the budget.
	budget := 2 * need
	h = startInProcess(t, Config{MemoryBudget: budget, QueueWait: 2 * time.Minute, MaxConcurrent: 4})
	var wg sync.WaitGroup
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			peak.Store(max(peak.Load(), int64(testutil.ToFloat64(h.s.metrics.memReserved))))
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = h.c.Upload(ctx, bytes.NewReader(file), &pb.UploadHeader{SizeBytes: size, Plan: plan})
		})
	}
	wg.Wait()
	close(done)
	for i, err := range errs {
		if err != nil {
			t.Errorf("check %d of four: %v", i, err)
		}
	}
	t.Logf("four at once: peak reserved %s of a %s budget", fmtBytes(peak.Load()), fmtBytes(budget))
	if p := peak.Load(); p > budget || p < need {
		t.Errorf("peak reservation %s, want between one check's %s and the budget %s", fmtBytes(p), fmtBytes(need), fmtBytes(budget))
	}
}

// TestSoftMemoryLimit: the daemon's soft limit is its budget plus the baseline, capped at 90% of
// a container's limit, and derived from the default budget when none is set.
func TestSoftMemoryLimit(t *testing.T) {
	write, missing := tempFiles(t)
	meminfo := write("meminfo", "MemTotal:       8000000 kB\n")
	for _, tc := range []struct {
		name   string
		v2     string
		budget int64
		want   int64
	}{
		{"no container, budget set", missing, 600 << 20, 600<<20 + DaemonBaselineBytes},
		{"no container, default budget", missing, 0, 8000000<<10/2 + DaemonBaselineBytes},
		{"container, default budget", write("v2", "1073741824\n"), 0, 3<<28 + DaemonBaselineBytes},
		{"container below the budget", write("v2small", "536870912\n"), 1 << 30, 536870912 / 10 * 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(a, b, c string) { cgroupV2MemoryMax, cgroupV1Limit, procMeminfo = a, b, c }(cgroupV2MemoryMax, cgroupV1Limit, procMeminfo)
			cgroupV2MemoryMax, cgroupV1Limit, procMeminfo = tc.v2, missing, meminfo
			if got := SoftMemoryLimit(tc.budget); got != tc.want {
				t.Errorf("SoftMemoryLimit(%d) = %d, want %d", tc.budget, got, tc.want)
			}
		})
	}
}

// TestMemoryLimiter: the limit is the baseline plus what is reserved, less the binary's pages and
// the margin of memmodel.RuntimeLimit, never below memmodel.RuntimeFloorBytes beyond what is reserved nor
// above SoftMemoryLimit; Follow sets it only when it moves by more than a sixteenth.
func TestMemoryLimiter(t *testing.T) {
	write, missing := tempFiles(t)
	meminfo := write("meminfo", "MemTotal:       8000000 kB\n")
	defer func(a, b, c string) { cgroupV2MemoryMax, cgroupV1Limit, procMeminfo = a, b, c }(cgroupV2MemoryMax, cgroupV1Limit, procMeminfo)
	cgroupV2MemoryMax, cgroupV1Limit, procMeminfo = missing, missing, meminfo
	const mib = 1 << 20
	for _, tc := range []struct {
		name                         string
		v2                           string
		budget, fileBacked, reserved int64
		want                         int64
	}{
		{"idle", missing, 600 * mib, 24 * mib, 0, 32 * mib},
		{"one request", missing, 600 * mib, 24 * mib, 16 * mib, 80*mib - 24*mib - 4*mib - 5*mib},
		{"budget reserved: the margin grows past the runtime floor", missing, 600 * mib, 24 * mib, 600 * mib, memmodel.RuntimeFloorBytes + 600*mib},
		{"binary larger than the baseline", missing, 600 * mib, 60 * mib, 0, memmodel.RuntimeFloorBytes},
		{"binary larger, one request", missing, 600 * mib, 60 * mib, 16 * mib, memmodel.RuntimeFloorBytes + 16*mib},
		{"capped by the container", write("v2", "536870912\n"), 1 << 30, 24 * mib, 1 << 30, 536870912 / 10 * 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(v2 string) { cgroupV2MemoryMax = v2 }(cgroupV2MemoryMax)
			cgroupV2MemoryMax = tc.v2
			m := NewMemoryLimiter(tc.budget, func() int64 { return tc.fileBacked }, func(int64) int64 { return 0 })
			if got := m.Limit(tc.reserved); got != tc.want {
				t.Errorf("Limit(%d) = %d, want %d", tc.reserved, got, tc.want)
			}
		})
	}

	// The binary's pages grow by 2 MiB after start; they are read again when the limit moves.
	var set []int64
	file := int64(24 * mib)
	m := NewMemoryLimiter(600*mib, func() int64 { return file }, func(l int64) int64 { set = append(set, l); return 0 })
	file = 26 * mib
	for _, r := range []int64{1 * mib, 4 * mib, 5 * mib, 0, 600 * mib, 0} {
		m.Follow(r)
	}
	want := []int64{32 * mib, 68*mib - 26*mib - 4*mib - 68*mib/16, 30 * mib, memmodel.RuntimeFloorBytes + 600*mib, 30 * mib}
	if !slices.Equal(set, want) {
		t.Errorf("limits set %v, want %v (1 MiB and 5 MiB move it less than a sixteenth)", set, want)
	}
}

// TestAdmissionReportsReserved: OnReserved sees what requests and cached layouts hold after each
// change.
func TestAdmissionReportsReserved(t *testing.T) {
	var last int64 = -1
	cfg := Config{MaxConcurrent: 2, MemoryBudget: 100 << 20, PeerShare: 1, QueueWait: time.Second,
		OnReserved: func(r int64) { last = r }}
	a := newAdmission(&cfg, newLayoutCache(4, 50<<20), newMetrics(prometheus.NewRegistry()))
	g, err := a.acquire(peerCtx("10.0.0.1:1"), true, 8<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	if last != 8<<20 {
		t.Errorf("after a grant of 8 MiB: reported %d", last)
	}
	a.cachePut("layout", cacheValue{&checkpoint.Layout{}, 3 << 20})
	if last != 11<<20 {
		t.Errorf("after caching 3 MiB beside it: reported %d", last)
	}
	if err := g.grow(10 << 20); err != nil {
		t.Fatal(err)
	}
	if last != 13<<20 {
		t.Errorf("after growing the grant to 10 MiB: reported %d", last)
	}
	g.release()
	if last != 3<<20 {
		t.Errorf("after the release: reported %d, want the cached 3 MiB", last)
	}
}

// TestPiecesReserveNoRows: a check answered in pieces holds a chunk and a page of its rows, not
// all of them, and reserves accordingly (memmodel.Rows.InPieces): under a budget that refuses
// CheckRescale with include_subtasks for its rows (2000 operators × 64 subtasks, an estimated
// 78 MiB), CheckRescaleStream of the same request runs.
func TestPiecesReserveNoRows(t *testing.T) {
	file, layout := scenariotest.SyntheticLayout(t, scenarios.SyntheticOperators(2000))
	req := &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: file}},
		Plan: &pb.RescalePlan{DefaultParallelism: 64}, Options: &pb.CheckOptions{IncludeSubtasks: true}}
	inPieces := memmodel.RequestBaseBytes + recordCounts(layout, req.Plan, req.Options, true).Bytes()
	whole := memmodel.RequestBaseBytes + recordCounts(layout, req.Plan, req.Options, false).Bytes()
	budget := 2 * inPieces
	if whole <= budget {
		t.Fatalf("the rows' estimate %s fits the budget %s", fmtBytes(whole), fmtBytes(budget))
	}
	h := startInProcess(t, Config{MemoryBudget: budget, QueueWait: 100 * time.Millisecond})
	ctx := context.Background()
	_, err := pb.NewPreflightServiceClient(dialHarness(t, h)).CheckRescale(ctx, req)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "2000 operators") {
		t.Errorf("CheckRescale with every row under a budget of %s: %v, want RESOURCE_EXHAUSTED naming the operators", fmtBytes(budget), err)
	}
	rep, err := h.c.Check(ctx, req) // CheckRescaleStream
	if err != nil {
		t.Fatalf("CheckRescaleStream under a budget of %s: %v", fmtBytes(budget), err)
	}
	rows := 0
	for _, op := range rep.GetOperators() {
		rows += len(op.GetSubtasks())
	}
	if rows != 2000*64 {
		t.Errorf("%d rows streamed, want %d", rows, 2000*64)
	}
}

// TestDiscoveredReservesRows: a check of the newest snapshot in a folder (latest) reserves its
// records and rows as a check of a named file does: under a budget that holds the file but not
// its include_subtasks rows, it is refused naming the operators; without rows it runs.
func TestDiscoveredReservesRows(t *testing.T) {
	file, layout := scenariotest.SyntheticLayout(t, scenarios.SyntheticOperators(2000))
	root := t.TempDir()
	snap := filepath.Join(root, "chk-3", "_metadata")
	os.MkdirAll(filepath.Dir(snap), 0o755)
	if err := os.WriteFile(snap, file, 0o644); err != nil {
		t.Fatal(err)
	}
	plan := &pb.RescalePlan{DefaultParallelism: 64}
	rows := &pb.CheckOptions{IncludeSubtasks: true}
	budget := 2 * (memmodel.RequestBaseBytes + recordCounts(layout, plan, nil, false).Bytes())
	if need := memmodel.RequestBaseBytes + recordCounts(layout, plan, rows, false).Bytes(); need <= budget {
		t.Fatalf("the rows' estimate %s fits the budget %s", fmtBytes(need), fmtBytes(budget))
	}
	h := startInProcess(t, Config{Allow: []string{root}, MemoryBudget: budget, QueueWait: 100 * time.Millisecond})
	c := pb.NewPreflightServiceClient(dialHarness(t, h))
	src := &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: root}, Latest: true}
	for _, tc := range []struct {
		opts    *pb.CheckOptions
		refused bool
	}{{rows, true}, {nil, false}} {
		_, err := c.CheckRescale(context.Background(), &pb.CheckRescaleRequest{Checkpoint: src, Plan: plan, Options: tc.opts})
		refused := status.Code(err) == codes.ResourceExhausted && strings.Contains(status.Convert(err).Message(), "2000 operators")
		if refused != tc.refused || !refused && err != nil {
			t.Errorf("latest with options %v under a budget of %s: %v (want refused: %v)", tc.opts, fmtBytes(budget), err, tc.refused)
		}
	}
}
