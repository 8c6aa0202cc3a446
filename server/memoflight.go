package server

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Identical first questions share one check (flightGroup, flight.go): the first asker's
// computation runs the check and memoizes the answer; an error is given to that flight's callers
// only and never memoized (the next request checks again); a panic in the check is recovered and
// logged with its stack, and its callers get INTERNAL, as the recovery interceptor answers a
// panic in a handler. Each caller holds its own memory grant for the layout (layoutOf) and logs
// and counts its own answer; the computation takes the check slot once, for all of them.

// memoHit is an answer a flight found memoized when it started.
type memoHit struct{ resp *pb.CheckRescaleResponse }

// flightError is a check's error with the plan as the first asker wrote it.
type flightError struct {
	plan *pb.RescalePlan
	err  error
}

func (e *flightError) Error() string { return e.err.Error() }

// checkOnce answers a question whose result key is key (not memoized when looked up): it joins
// the computation in flight for key, or starts one. plan is the request's own, as written; the
// key may stand for the same question written otherwise (memokey.go), whose answer is the same.
// An error quotes the plan's keys, though, so a caller whose plan is written otherwise than the
// one checked does not take the flight's error but checks its own plan.
func (s *Server) checkOnce(ctx context.Context, key []byte, l *checkpoint.Layout, label string, plan *pb.RescalePlan, opts *pb.CheckOptions) (*pb.CheckRescaleResponse, error) {
	addLog(ctx, slog.String("source", label), slog.Int64("metadata_bytes", l.Size))
	// The key is copied here: key's buffer returns to a pool when this caller leaves, which it
	// may do (its context ending) while the flight still runs.
	k := string(key)
	v, err, ran := s.flights.do(ctx, "result\x00"+k, func(ctx context.Context) (v any, err error) {
		return s.fly(ctx, k, l, label, plan, opts)
	})
	if fe := (*flightError)(nil); errors.As(err, &fe) {
		err = fe.err
		if !ran && fe.plan != plan && !proto.Equal(fe.plan, plan) {
			var report *pb.RescaleReport
			if report, err = s.checkReport(ctx, l, label, plan, opts, nil); err == nil {
				v, ran = &pb.CheckRescaleResponse{Report: report}, true
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if hit, ok := v.(memoHit); ok {
		if ran {
			return hit.resp, nil // cachedResult logged and counted it
		}
		v = hit.resp
	}
	resp := v.(*pb.CheckRescaleResponse)
	if !ran {
		s.metrics.results.WithLabelValues("shared").Inc()
		addLog(ctx, slog.String("result_cache", "shared"))
	}
	report := resp.GetReport()
	addLog(ctx, slog.String("verdict", report.GetVerdict().String()), slog.Int("findings", len(report.GetFindings())))
	s.metrics.verdicts.WithLabelValues(report.GetVerdict().String()).Inc()
	return resp, nil
}

// fly computes the answer of a flight: a check slot, the engine, then the result cache. ctx is
// the flight's (the first asker's values); an error carries plan.
func (s *Server) fly(ctx context.Context, key string, l *checkpoint.Layout, label string, plan *pb.RescalePlan, opts *pb.CheckOptions) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			// Logged and answered as the recovery interceptor does.
			v, err = nil, &flightError{plan, s.recovered(ctx, p)}
		}
	}()
	// An answer memoized since this request looked: the flight that computed it has landed.
	if resp, ok := s.cachedResult(ctx, []byte(key)); ok {
		return memoHit{resp}, nil
	}
	if s.flightHook != nil {
		s.flightHook(ctx)
	}
	report, err := s.checkReport(ctx, l, label, plan, opts, nil)
	if err != nil {
		return nil, &flightError{plan, err}
	}
	resp := &pb.CheckRescaleResponse{Report: report}
	s.memoize(key, resp)
	return resp, nil
}
