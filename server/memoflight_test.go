package server

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// flightWaiters is the number of requests waiting for answers in flight.
func flightWaiters(s *Server) int { return s.flights.waiting() }

func flightsOpen(s *Server) int { return s.flights.open() }

// eventually polls cond for up to 10 s (the machine is shared and loaded).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// flightProbe is a flightHook that counts the checks run and can hold them back.
type flightProbe struct {
	runs    atomic.Int32
	hold    func(ctx context.Context, run int32) // nil: go on at once
	lastCtx atomic.Pointer[context.Context]
}

func (p *flightProbe) hook(ctx context.Context) {
	n := p.runs.Add(1)
	p.lastCtx.Store(&ctx)
	if p.hold != nil {
		p.hold(ctx, n)
	}
}

func unknownOperatorReq(uri string) *pb.CheckRescaleRequest {
	return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: uri}},
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"no-such-operator": 2}}}
}

// Identical first questions asked at once run one check: the others wait for it and get the
// same answer. An answer is memoized (the next asker is a hit, no check); an error is shared by
// that flight's waiters only and not memoized (the next asker checks again); a panic in the
// check answers INTERNAL to every waiter instead of leaving them hanging.
func TestSingleFlightIdenticalQuestions(t *testing.T) {
	noLeaks(t)
	const callers = 20
	for _, tc := range []struct {
		name     string
		req      func(uri string) *pb.CheckRescaleRequest
		panics   bool
		wantCode codes.Code
		verdict  pb.Verdict
	}{
		{"DENY", func(u string) *pb.CheckRescaleRequest { return planReq(u, 8) }, false, codes.OK, pb.Verdict_VERDICT_DENY},
		{"ALLOW", func(u string) *pb.CheckRescaleRequest { return planReq(u, 4) }, false, codes.OK, pb.Verdict_VERDICT_ALLOW},
		{"plan error", unknownOperatorReq, false, codes.InvalidArgument, 0},
		{"panic", func(u string) *pb.CheckRescaleRequest { return planReq(u, 8) }, true, codes.Internal, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, meta := memoHarness(t, Config{QueueWait: time.Minute})
			probe := &flightProbe{}
			probe.hold = func(ctx context.Context, run int32) {
				if run > 1 {
					return
				}
				// Hold the first check until every caller waits for it (bounded: a failure to
				// join shows as more runs, not as a hang).
				for deadline := time.Now().Add(10 * time.Second); flightWaiters(h.s) < callers && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				if tc.panics {
					panic("injected")
				}
			}
			h.s.flightHook = probe.hook
			req := tc.req(meta)
			outs := make([]outcome, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					outs[i] = newOutcome(h.c.Check(ctx, req))
				})
			}
			wg.Wait()
			if n := probe.runs.Load(); n != 1 {
				t.Errorf("%d identical questions ran %d checks, want 1", callers, n)
			}
			for i, o := range outs {
				if !o.equal(outs[0]) {
					t.Errorf("caller %d: %s, caller 0: %s", i, o.brief(), outs[0].brief())
				}
			}
			if outs[0].code != tc.wantCode.String() || (tc.wantCode == codes.OK && outs[0].report.GetVerdict() != tc.verdict) {
				t.Fatalf("answer %s %s, want %v %v", outs[0].code, outs[0].brief(), tc.wantCode, tc.verdict)
			}
			hits, misses := resultCounts(h)
			shared := testutil.ToFloat64(h.s.metrics.results.WithLabelValues("shared"))
			cached := h.s.cache.resultLen()
			if flightsOpen(h.s) != 0 {
				t.Errorf("%d flights left open", flightsOpen(h.s))
			}
			// The next asker.
			next := newOutcome(h.c.Check(context.Background(), req))
			if tc.wantCode == codes.OK {
				if hits != 0 || misses != 1 || shared != callers-1 || cached != 1 {
					t.Errorf("hits %v misses %v shared %v, %d cached; want 0, 1, %d, 1", hits, misses, shared, cached, callers-1)
				}
				if h2, _ := resultCounts(h); !next.equal(outs[0]) || h2 != 1 || probe.runs.Load() != 1 {
					t.Errorf("next asker: %s, %v hits, %d runs; want the same answer from the cache", next.brief(), h2, probe.runs.Load())
				}
				return
			}
			if cached != 0 || shared != 0 {
				t.Errorf("a failure was memoized (%d results) or counted as shared (%v)", cached, shared)
			}
			// Not memoized: checked again (a panic once, then the real answer).
			if probe.runs.Load() != 2 {
				t.Errorf("next asker ran %d checks in all, want 2", probe.runs.Load())
			}
			if tc.panics && (next.code != "OK" || next.report.GetVerdict() != pb.Verdict_VERDICT_DENY) {
				t.Errorf("after the panic: %s", next.brief())
			}
		})
	}
}

// A waiter's own deadline is honoured while the check it waits for goes on for the others; the
// last waiter leaving cancels the check, nothing is memoized, and the next asker starts afresh.
func TestSingleFlightWaitersLeave(t *testing.T) {
	noLeaks(t)
	h, meta := memoHarness(t, Config{QueueWait: time.Minute})
	release := make(chan struct{})
	probe := &flightProbe{hold: func(ctx context.Context, run int32) {
		if run > 1 {
			return
		}
		select {
		case <-release:
		case <-ctx.Done():
		case <-time.After(30 * time.Second):
		}
	}}
	h.s.flightHook = probe.hook
	req := planReq(meta, 8)

	// A (no deadline of its own but the test's) and B (a short deadline) ask the same question.
	type answer struct {
		o   outcome
		err error
	}
	ask := func(ctx context.Context) chan answer {
		ch := make(chan answer, 1)
		go func() {
			rep, err := h.c.Check(ctx, req)
			ch <- answer{newOutcome(rep, err), err}
		}()
		return ch
	}
	actx, acancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer acancel()
	a := ask(actx)
	eventually(t, "A waiting", func() bool { return flightWaiters(h.s) == 1 })
	bctx, bcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer bcancel()
	start := time.Now()
	b := ask(bctx)
	if got := <-b; status.Code(got.err) != codes.DeadlineExceeded {
		t.Fatalf("B: %v, want DEADLINE_EXCEEDED", got.err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("B answered after %v, its deadline was 300 ms", d)
	}
	eventually(t, "B gone", func() bool { return flightWaiters(h.s) == 1 })
	if ctx := *probe.lastCtx.Load(); ctx.Err() != nil {
		t.Fatalf("the check was cancelled while A still waits: %v", ctx.Err())
	}
	close(release)
	if got := <-a; got.err != nil || got.o.report.GetVerdict() != pb.Verdict_VERDICT_DENY {
		t.Fatalf("A: %v %s", got.err, got.o.brief())
	}
	if n := h.s.cache.resultLen(); n != 1 || probe.runs.Load() != 1 {
		t.Fatalf("%d results memoized after %d runs, want 1 and 1", n, probe.runs.Load())
	}

	// Another question; both waiters cancel: the first leaving does not stop the check, the
	// last does.
	req = planReq(meta, 2)
	probe.runs.Store(0)
	hold := make(chan error, 1)
	probe.hold = func(ctx context.Context, run int32) {
		if run > 1 {
			return
		}
		select {
		case <-ctx.Done():
			hold <- ctx.Err()
		case <-time.After(30 * time.Second):
			hold <- fmt.Errorf("not cancelled within 30 s")
		}
	}
	c1, cancel1 := context.WithCancel(context.Background())
	c2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	w1, w2 := ask(c1), ask(c2)
	eventually(t, "two waiters", func() bool { return flightWaiters(h.s) == 2 })
	cancel1()
	if got := <-w1; status.Code(got.err) != codes.Canceled {
		t.Fatalf("first waiter: %v, want CANCELLED", got.err)
	}
	eventually(t, "the first waiter gone", func() bool { return flightWaiters(h.s) == 1 })
	if ctx := *probe.lastCtx.Load(); ctx.Err() != nil {
		t.Fatalf("the check was cancelled while a waiter remains: %v", ctx.Err())
	}
	cancel2()
	if got := <-w2; status.Code(got.err) != codes.Canceled {
		t.Fatalf("second waiter: %v, want CANCELLED", got.err)
	}
	if err := <-hold; err != context.Canceled {
		t.Fatalf("the check after the last waiter left: %v, want cancelled", err)
	}
	eventually(t, "the flight gone", func() bool { return flightsOpen(h.s) == 0 })
	if n := h.s.cache.resultLen(); n != 1 {
		t.Errorf("%d results memoized, want only the first question's", n)
	}
	if rep, err := h.c.Check(context.Background(), req); err != nil || rep.GetVerdict() == pb.Verdict_VERDICT_UNSPECIFIED {
		t.Fatalf("next asker: %v", err)
	}
	if n := probe.runs.Load(); n != 2 {
		t.Errorf("the next asker ran %d checks in all, want 2 (a fresh one)", n)
	}
}

// Questions written differently but the same (an operator by name and by ID) share a flight and
// its answer; its error, which quotes the plan as the first asker wrote it, is not given to a
// waiter who wrote it otherwise: that waiter checks its own plan.
func TestSingleFlightCanonicalPlans(t *testing.T) {
	noLeaks(t)
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			h, meta := memoHarness(t, Config{QueueWait: time.Minute})
			probe := &flightProbe{hold: func(ctx context.Context, run int32) {
				if run > 1 {
					return
				}
				for deadline := time.Now().Add(10 * time.Second); flightWaiters(h.s) < 2 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				if fail {
					panic("injected")
				}
			}}
			byID, byName := planReq(meta, 8), planReq(meta, 8)
			byID.Plan.VertexParallelism = map[string]int32{compactOperatorID: 8}
			// The layout is cached first, so both resolve the same way before the flight.
			if _, err := h.c.Check(context.Background(), planReq(meta, 4)); err != nil {
				t.Fatal(err)
			}
			h.s.flightHook = probe.hook
			first := make(chan outcome, 1)
			go func() { first <- newOutcome(h.c.Check(context.Background(), byID)) }()
			eventually(t, "the first asker waiting", func() bool { return flightWaiters(h.s) == 1 })
			second := newOutcome(h.c.Check(context.Background(), byName))
			a := <-first
			switch {
			case !fail && (a.code != "OK" || !second.equal(a) || probe.runs.Load() != 1):
				t.Errorf("by ID %s, by name %s, %d checks; want one DENY for both", a.brief(), second.brief(), probe.runs.Load())
			case fail && (a.code != "Internal" || second.code != "OK" || second.report.GetVerdict() != pb.Verdict_VERDICT_DENY):
				t.Errorf("by ID %s, by name %s; want INTERNAL for the first, its own DENY for the second", a.brief(), second.brief())
			}
		})
	}
}
