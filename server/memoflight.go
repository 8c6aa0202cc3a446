package server

import (
	"context"
	"log/slog"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Single-flight for identical first questions. An autoscaler's replicas, or one caller retrying,
// often ask the same question (same result key: file version, label, plan, options) at once
// before its answer is memoized; without this each of them would run the engine. With it the
// first one starts the computation and the others wait for it:
//
//   - the computation runs in its own goroutine under a context of its own, which carries the
//     first caller's values (request ID, peer) but not its deadline or cancellation; it is
//     cancelled when the last waiter leaves, so it never runs for no one and never beyond the
//     longest waiter's deadline;
//   - a waiter whose own context ends returns at once with DEADLINE_EXCEEDED or CANCELLED; the
//     computation continues for the others;
//   - an answer is memoized before the flight is removed, so a request that misses both the
//     flight and the cache is a new question; an error is given to the waiters of that flight
//     only and never memoized (the next request computes again);
//   - a panic in the computation is recovered and logged with its stack, and its waiters get
//     INTERNAL, as the recovery interceptor answers a panic in a handler: never a hang.
//
// Each waiter holds its own memory grant for the layout (layoutOf) and logs and counts its own
// answer; the computation takes the check slot once, for all of them.

// resultFlight is one computation of an answer that identical questions wait for.
type resultFlight struct {
	plan   *pb.RescalePlan // as the first asker wrote it: the one checked
	done   chan struct{}   // closed when resp or err is set
	resp   *pb.CheckRescaleResponse
	err    error
	cancel context.CancelFunc
	// waiters is the number of requests waiting for done (guarded by Server.resultMu).
	waiters int
}

// checkOnce answers a question whose result key is key (not memoized when looked up): it joins
// the computation in flight for key, or starts one. plan is the request's own, as written; the
// key may stand for the same question written otherwise (memokey.go), whose answer is the same.
// An error quotes the plan's keys, though, so a waiter whose plan is written otherwise than the
// one checked does not take the flight's error but checks its own plan.
func (s *Server) checkOnce(ctx context.Context, key []byte, l *checkpoint.Layout, label string, plan *pb.RescalePlan, opts *pb.CheckOptions) (*pb.CheckRescaleResponse, error) {
	s.resultMu.Lock()
	f, joined := s.resultFlights[string(key)]
	if !joined {
		// An answer memoized since this request looked: the flight that computed it has landed.
		if resp, ok := s.cachedResult(ctx, key); ok {
			s.resultMu.Unlock()
			return resp, nil
		}
		k := string(key)
		fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &resultFlight{plan: plan, done: make(chan struct{}), cancel: cancel}
		s.resultFlights[k] = f
		go s.fly(fctx, k, f, l, label, plan, opts)
	}
	f.waiters++
	s.resultMu.Unlock()
	addLog(ctx, slog.String("source", label), slog.Int64("metadata_bytes", l.Size))

	select {
	case <-f.done:
	case <-ctx.Done():
		s.leave(key, f)
		return nil, ctx.Err()
	}
	resp, err := f.resp, f.err
	if err != nil && joined && f.plan != plan && !proto.Equal(f.plan, plan) {
		var report *pb.RescaleReport
		if report, err = s.checkReport(ctx, l, label, plan, opts); err == nil {
			resp, joined = &pb.CheckRescaleResponse{Report: report}, false
		}
	}
	if err != nil {
		return nil, err
	}
	if joined {
		s.metrics.results.WithLabelValues("shared").Inc()
		addLog(ctx, slog.String("result_cache", "shared"))
	}
	report := resp.GetReport()
	addLog(ctx, slog.String("verdict", report.GetVerdict().String()), slog.Int("findings", len(report.GetFindings())))
	s.metrics.verdicts.WithLabelValues(report.GetVerdict().String()).Inc()
	return resp, nil
}

// leave is a waiter giving up before the flight landed; the last one cancels the computation
// and removes the flight, so that a later request starts afresh.
func (s *Server) leave(key []byte, f *resultFlight) {
	s.resultMu.Lock()
	defer s.resultMu.Unlock()
	f.waiters--
	if f.waiters > 0 {
		return
	}
	select {
	case <-f.done: // landed meanwhile: it was memoized or its error is reported; nothing to stop
	default:
		if s.resultFlights[string(key)] == f {
			delete(s.resultFlights, string(key))
		}
		f.cancel()
	}
}

// fly computes the answer of a flight: a check slot, the engine, then the result cache.
func (s *Server) fly(ctx context.Context, key string, f *resultFlight, l *checkpoint.Layout, label string, plan *pb.RescalePlan, opts *pb.CheckOptions) {
	defer func() {
		if p := recover(); p != nil {
			// ctx keeps the first asker's values (request ID, method): logged and answered as
			// the recovery interceptor does.
			f.resp, f.err = nil, s.recovered(ctx, p)
		}
		f.cancel()
		if f.err == nil {
			s.memoize(key, f.resp)
		}
		s.resultMu.Lock()
		if s.resultFlights[key] == f {
			delete(s.resultFlights, key)
		}
		s.resultMu.Unlock()
		close(f.done)
	}()
	if s.flightHook != nil {
		s.flightHook(ctx)
	}
	report, err := s.checkReport(ctx, l, label, plan, opts)
	if err != nil {
		f.err = err
		return
	}
	f.resp = &pb.CheckRescaleResponse{Report: report}
}
