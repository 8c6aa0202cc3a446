package decision_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/decision"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// refusedJob has n operators at parallelism 8 (max parallelism 128), one vertex each, whose
// old subtasks each hold a file stream with a SPLIT_DISTRIBUTE and a UNION state. Every new
// subtask receives all 8 UNION streams, so a frame size of 512 bytes refuses every parallelism.
func refusedJob(n int) (l *checkpoint.Layout, frame int64) {
	l = &checkpoint.Layout{Version: 3, Operators: make([]checkpoint.OperatorLayout, n)}
	for i := range l.Operators {
		var id checkpoint.OperatorID
		id[0] = 0xd0
		binary.BigEndian.PutUint32(id[12:], uint32(i))
		op := checkpoint.OperatorLayout{ID: id, Parallelism: 8, MaxParallelism: 128}
		for j := 0; j < 8; j++ {
			e := checkpoint.StateEntryLayout{Name: "buffer", Mode: checkpoint.SplitDistribute, Elements: 4, Bytes: 400}
			e.Sizes.Append(100, 4)
			u := checkpoint.StateEntryLayout{Name: "offsets", Mode: checkpoint.Union, Elements: 1, Bytes: 24}
			u.Sizes.Append(24, 1)
			op.Subtasks = append(op.Subtasks, checkpoint.SubtaskLayout{Index: j, RefCheckpointID: -1, ManagedOperatorState: &checkpoint.OperatorStateHandleLayout{
				States: []checkpoint.StateEntryLayout{e, u},
				Stream: checkpoint.StreamRef{Kind: checkpoint.StreamFile, Path: fmt.Sprintf("s3://bucket/job/chk-1/%s-%d", id, j), Size: 424}}})
		}
		l.Operators[i] = op
	}
	return l, 512
}

// BenchmarkDecideRefused: Decide with every vertex of a job proposed down to 3 with key-group
// alignment, where no parallelism restores (the UNION payload exceeds the frame size), so the
// engine's search finds nothing and the aligned candidates 4, 2 and 1 are each tested and
// refused: 3 probes per vertex, then VETO. Reported per vertex; linear cost is a flat ns/vertex.
func BenchmarkDecideRefused(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			l, frame := refusedJob(n)
			proposal := map[string]int32{}
			for i := range l.Operators {
				proposal[l.Operators[i].ID.String()] = 3
			}
			req := &pb.DecideRequest{ProposedParallelism: proposal, AlignToKeyGroups: true, Options: &pb.CheckOptions{RpcFrameSizeBytes: frame}}
			eng := engine.New()
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			var resp *pb.DecideResponse
			for range b.N {
				var err error
				resp, err = decision.Decide(context.Background(), eng, decision.Input{Layout: l, Source: "bench", Request: req})
				if err != nil {
					b.Fatal(err)
				}
			}
			cpu := testutil.CPUTime() - cpu0
			b.StopTimer()
			if resp.GetAction() != pb.DecisionAction_DECISION_ACTION_VETO || len(resp.GetVertices()) != n {
				b.Fatalf("want a VETO of %d vertices: %v", n, resp.GetAction())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/vertex")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/vertex")
		})
	}
}

// TestDecideManyRefusedStops: Decide over 1,000 refused vertices (3 probes each) ends with the
// context's error soon after a short deadline, and completes without one.
func TestDecideManyRefusedStops(t *testing.T) {
	l, frame := refusedJob(1000)
	proposal := map[string]int32{}
	for i := range l.Operators {
		proposal[l.Operators[i].ID.String()] = 3
	}
	req := &pb.DecideRequest{ProposedParallelism: proposal, AlignToKeyGroups: true, Options: &pb.CheckOptions{RpcFrameSizeBytes: frame}}
	eng := engine.New()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := decision.Decide(ctx, eng, decision.Input{Layout: l, Source: "many", Request: req})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with a 20 ms deadline: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned %v after the start (deadline 20 ms)", d)
	}
	small, _ := refusedJob(50)
	few := map[string]int32{}
	for i := range small.Operators {
		few[small.Operators[i].ID.String()] = 3
	}
	req.ProposedParallelism = few
	resp, err := decision.Decide(context.Background(), eng, decision.Input{Layout: small, Source: "many", Request: req})
	if err != nil || resp.GetAction() != pb.DecisionAction_DECISION_ACTION_VETO || len(resp.GetVertices()) != 50 {
		t.Fatalf("without a deadline: %v %v", resp.GetAction(), err)
	}
	for _, v := range resp.GetVertices() {
		if !strings.Contains(v.GetReason(), "no safe parallelism below the current 8") || v.GetFindingIds()[0] != "PF120" {
			t.Fatalf("%s: %v %s", v.GetVertexId(), v.GetFindingIds(), v.GetReason())
		}
	}
}

// TestProberMatchesDenyingAt: the prober (plan simulated once, one vertex re-simulated per
// test) denies exactly what a whole-plan check of the vertex at that parallelism denies, for
// every vertex of compact-sink with and without the running job's chains, at every
// parallelism up to 16.
func TestProberMatchesDenyingAt(t *testing.T) {
	l := compactSink(t)
	eng := engine.New()
	ctx := context.Background()
	for _, withJob := range []bool{false, true} {
		var pl *placement.Result
		if withJob {
			pl = placement.Place(l, job())
		}
		plan := &pb.RescalePlan{VertexParallelism: map[string]int32{compactOp: 8}}
		opts := &pb.CheckOptions{FlinkVersion: "1.18.0"}
		rep, err := eng.Check(ctx, engine.Request{Layout: l, Source: "x", Plan: plan, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := eng.NewProber(ctx, l, plan, opts, pl)
		if err != nil {
			t.Fatal(err)
		}
		vertices := map[string]bool{}
		for _, o := range rep.GetOperators() {
			vertices[o.GetVertexId()] = true
		}
		tested := 0
		for vid := range vertices {
			for p := 1; p <= 16; p++ {
				got, err := pr.DenyingAt(ctx, vid, p)
				if err != nil {
					if withJob {
						continue // a checkpoint vertex merged into a job chain
					}
					t.Fatal(err)
				}
				whole := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
				for k, v := range plan.GetVertexParallelism() {
					whole.VertexParallelism[k] = v
				}
				whole.VertexParallelism[vid] = int32(p)
				if vid != compactOp {
					whole.VertexParallelism[compactOp] = 8
				} else {
					delete(whole.VertexParallelism, compactOp)
					whole.VertexParallelism[vid] = int32(p)
				}
				want, err := eng.DenyingAt(ctx, l, whole, opts, pl, vid)
				if err != nil {
					t.Fatal(err)
				}
				tested++
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("job %v vertex %s at %d: prober %v, whole plan %v", withJob, vid, p, got, want)
				}
			}
		}
		if tested < 48 {
			t.Fatalf("only %d probes compared", tested)
		}
	}
}
