package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/decision"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/statefiles"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Decide answers an autoscaler. Errors the caller made (no proposal, a bad job ID or plan key)
// are INVALID_ARGUMENT; every other failure to run the check (REST or checkpoint unreadable,
// unknown job, no checkpoint, the deadline) is answered by the request's failure policy, with
// failed set, so that an autoscaler always gets a decision it can apply.
func (v *service) Decide(ctx context.Context, req *pb.DecideRequest) (*pb.DecideResponse, error) {
	if len(req.GetProposedParallelism()) == 0 {
		return nil, errInvalid("decide: proposed_parallelism is empty")
	}
	if req.GetCheckpoint() == nil && req.GetJob() == nil {
		return nil, errInvalid("decide: set checkpoint, job, or both")
	}
	// Keep a slice of the caller's deadline to answer with the failure policy when the check
	// itself runs out of time.
	work, cancel := workContext(ctx)
	defer cancel()
	resp, err := v.s.decide(work, req)
	if err == nil {
		addLog(ctx, slog.String("decision", resp.GetAction().String()))
		return resp, nil
	}
	st := discoveryStatus(work, err)
	code := status.Code(st)
	switch {
	case code == codes.InvalidArgument:
		return nil, st
	case ctx.Err() != nil:
		return nil, toStatus(ctx, ctx.Err()) // the caller is gone: nothing to answer
	}
	resp = decision.Failed(req, codeName(code), errors.New(status.Convert(st).Message()))
	addLog(ctx, slog.String("decision", resp.GetAction().String()), slog.String("failure", resp.GetFailure()))
	return resp, nil
}

// workContext leaves a tenth of the remaining deadline (at most 1 s, at least 10 ms) for the
// answer.
func workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := time.Until(dl) / 10
	margin = min(max(margin, 10*time.Millisecond), time.Second)
	return context.WithDeadline(ctx, dl.Add(-margin))
}

// decide runs discovery (when a job is named), reads the layout through the cache, and decides.
func (s *Server) decide(ctx context.Context, req *pb.DecideRequest) (*pb.DecideResponse, error) {
	ctx, err := s.withJobCode(ctx, req.GetOptions())
	if err != nil {
		return nil, err
	}
	d, err := s.discover(ctx, req.GetJob(), req.GetCheckpoint())
	if err != nil {
		return nil, err
	}
	defer d.mem.release()
	addLog(ctx, slog.String("source", d.label), slog.Int64("metadata_bytes", d.layout.Size))
	files := s.verifyFiles(ctx, readSource(req.GetCheckpoint(), d.label), d.label, req.GetOptions(), true, statefiles.DefaultBudget)
	slot, err := s.adm.acquire(ctx, true, 0, false) // admission.go: the simulation holds a check slot
	if err != nil {
		return nil, err
	}
	defer slot.release()
	in := decision.Input{Layout: d.layout, Source: d.label, Job: d.job, Placement: d.placement, Choice: d.choice, Request: req}
	in.Files, in.FileFindings = fileFacts(files)
	return decision.Decide(ctx, s.engine(ctx), in)
}

// readSource is the source to verify the files of: the request's inline bytes, or the URI the
// checkpoint was read from (a discovered one's label).
func readSource(req *pb.CheckpointSource, label string) *pb.CheckpointSource {
	if req.GetMetadata() != nil {
		return req
	}
	return &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: label}}
}

// fileFacts are the summary and findings of a verification, nil when it did not run.
func fileFacts(res *statefiles.Result) (*pb.FileVerification, []*pb.Finding) {
	if res == nil {
		return nil, nil
	}
	return res.Summary(), res.Findings()
}

// discovered is a checkpoint read for a request, with the job it belongs to when known.
type discovered struct {
	layout    *checkpoint.Layout
	label     string
	job       *flinkrest.Job
	placement *placement.Result
	choice    *pb.CheckpointChoice
	mem       *grant // the memory reserved for the layout (admission.go); release after the check
}

// discover reads the job from Flink's REST API (when named) and the checkpoint: the one given,
// the newest in a folder (CheckpointSource.latest), or the job's newest restorable one.
func (s *Server) discover(ctx context.Context, job *pb.FlinkJob, src *pb.CheckpointSource) (*discovered, error) {
	d := &discovered{}
	if job != nil {
		if err := s.sources.AllowURL(job.GetRestUrl()); err != nil {
			return nil, err
		}
		c, err := flinkrest.New(job.GetRestUrl(), s.cfg.FlinkREST)
		if err != nil {
			return nil, err
		}
		if d.job, err = c.Job(ctx, job.GetJobId()); err != nil {
			return nil, err
		}
		if src == nil {
			r, err := d.job.Latest()
			if err != nil {
				return nil, err
			}
			uri, err := flinkrest.SourceURI(r.ExternalPath)
			if err != nil {
				return nil, err
			}
			src = &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: uri}}
			d.choice = choiceOf(r, uri)
		}
	}
	if src.GetLatest() {
		snap, note, err := s.sources.Latest(ctx, src.GetUri())
		if err != nil {
			return nil, err
		}
		age := int64(-1)
		if !snap.ModTime.IsZero() {
			age = time.Since(snap.ModTime).Milliseconds()
		}
		d.choice = &pb.CheckpointChoice{Uri: snap.URI, Kind: snap.Kind, CheckpointId: snap.ID, CompletedAtMs: snap.ModTime.UnixMilli(), AgeMs: age, Origin: "storage", Note: note}
		src = &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: snap.URI}}
	}
	var err error
	if d.layout, d.label, d.mem, err = s.layout(ctx, src); err != nil {
		return nil, err
	}
	if d.job != nil {
		d.placement = placement.Place(d.layout, d.job)
	}
	return d, nil
}

func choiceOf(r flinkrest.Restorable, uri string) *pb.CheckpointChoice {
	kind := "checkpoint"
	if r.Savepoint {
		kind = "savepoint"
	}
	return &pb.CheckpointChoice{Uri: uri, Kind: kind, CheckpointId: r.ID, CompletedAtMs: r.CompletedAt, AgeMs: r.Age.Milliseconds(), Origin: "flink-rest", Note: r.Note}
}

// checkDiscovered is CheckRescale with a job or a latest-in-folder checkpoint. With send (an
// answer in pieces) and rows asked for, the operators are sent as they are converted and the
// report returned has none, as for a file.
func (s *Server) checkDiscovered(ctx context.Context, req *pb.CheckRescaleRequest, send func(*pb.ReportPiece) error) (*pb.CheckRescaleResponse, error) {
	d, err := s.discover(ctx, req.GetJob(), req.GetCheckpoint())
	if err != nil {
		return nil, discoveryStatus(ctx, err)
	}
	defer d.mem.release()
	send = rowSender(send, req.GetOptions())
	// A check slot and the memory of the records and report rows, as any check (checkmem.go).
	slot, err := s.acquireCheck(ctx, d.layout, req.GetPlan(), req.GetOptions(), send != nil)
	if err != nil {
		return nil, err
	}
	defer slot.release()
	opts := req.GetOptions()
	if d.job != nil && opts.GetFlinkVersion() == "" && d.job.FlinkVersion != "" {
		if opts == nil {
			opts = &pb.CheckOptions{}
		} else {
			opts = proto.Clone(opts).(*pb.CheckOptions)
		}
		opts.FlinkVersion = d.job.FlinkVersion
	}
	addLog(ctx, slog.String("source", d.label), slog.Int64("metadata_bytes", d.layout.Size))
	report, err := s.checkSending(ctx, engine.Request{Layout: d.layout, Source: d.label, Plan: req.GetPlan(), Options: opts, Placement: d.placement}, send)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	report.CheckpointChoice = d.choice
	report = withFiles(report, s.verifyFiles(ctx, readSource(req.GetCheckpoint(), d.label), d.label, opts, false, statefiles.DefaultBudget), opts)
	addLog(ctx, slog.String("verdict", report.GetVerdict().String()), slog.Int("findings", len(report.GetFindings())))
	s.metrics.verdicts.WithLabelValues(report.GetVerdict().String()).Inc()
	return &pb.CheckRescaleResponse{Report: report}, nil
}

// discoveryStatus maps Flink REST and decision errors, then everything else as toStatus does.
func discoveryStatus(ctx context.Context, err error) error {
	var fe *flinkrest.Error
	if errors.As(err, &fe) && ctx.Err() == nil {
		code := codes.Internal
		switch fe.Kind {
		case flinkrest.Invalid:
			code = codes.InvalidArgument
		case flinkrest.NotFound:
			code = codes.NotFound
		case flinkrest.FailedPrecondition:
			code = codes.FailedPrecondition
		case flinkrest.Unavailable:
			code = codes.Unavailable
		case flinkrest.PermissionDenied:
			code = codes.PermissionDenied
		}
		return status.Error(code, fe.Error())
	}
	if errors.Is(err, decision.ErrNoProposal) {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return toStatus(ctx, err)
}

// codeName is the canonical name of a gRPC code, e.g. "NOT_FOUND", as grpcurl and the HTTP
// gateway print it.
func codeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}
