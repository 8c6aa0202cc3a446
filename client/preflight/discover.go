package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// jobFlags name a running job (Flink REST) and how to reach it, and --latest.
type jobFlags struct {
	restURL string
	jobID   string
	latest  bool
	rest    flinkrest.Options
}

func (j *jobFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&j.restURL, "flink-rest", "", "Flink REST endpoint of the running job (http(s)://jobmanager:8081); with --job, its vertices, chains and newest checkpoint are read from there")
	f.StringVar(&j.jobID, "job", "", "job ID (32 hex characters) on --flink-rest")
	f.BoolVar(&j.latest, "latest", false, "CHECKPOINT is a job's checkpoint folder: read its newest complete chk-N or savepoint")
	f.DurationVar(&j.rest.Timeout, "flink-rest-timeout", 10*time.Second, "timeout of each Flink REST call")
	f.StringVar(&j.rest.CAFile, "flink-rest-ca", "", "CA (PEM) to verify an https Flink REST endpoint")
	f.BoolVar(&j.rest.InsecureSkipVerify, "flink-rest-insecure", false, "do not verify the Flink REST endpoint's certificate")
	f.StringVar(&j.rest.TokenFile, "flink-rest-token-file", "", "file holding a bearer token for Flink's REST API")
	f.StringVar(&j.rest.TokenEnv, "flink-rest-token-env", "", "environment variable holding a bearer token for Flink's REST API")
}

// validate checks the combination of flags and the positional checkpoint.
func (j *jobFlags) validate(args []string) error {
	if (j.restURL == "") != (j.jobID == "") {
		return usagef("--flink-rest and --job go together")
	}
	if len(args) == 0 && j.restURL == "" {
		return usagef("name a CHECKPOINT, or a running job with --flink-rest URL --job JOBID")
	}
	if j.latest && len(args) == 0 {
		return usagef("--latest needs CHECKPOINT: the job's checkpoint folder")
	}
	return nil
}

func (j *jobFlags) pbJob() *pb.FlinkJob {
	if j.restURL == "" {
		return nil
	}
	return &pb.FlinkJob{RestUrl: j.restURL, JobId: j.jobID}
}

// discovery is what the in-process CLI found: the job (if named), the checkpoint to read and
// how it was chosen.
type discovery struct {
	job       *flinkrest.Job
	target    string // checkpoint path or URI to open
	choice    *pb.CheckpointChoice
	layout    *checkpoint.Layout
	placement *placement.Result
}

// discover reads the job from Flink's REST API and picks the checkpoint: the one given, the
// newest in a folder (--latest), or the job's newest restorable one. Then it decodes it.
func (j *jobFlags) discover(cmd *cobra.Command, args []string, eng *engine.Engine) (*discovery, error) {
	ctx := cmd.Context()
	d := &discovery{}
	if len(args) > 0 {
		d.target = args[0]
	}
	if j.restURL != "" {
		c, err := flinkrest.New(j.restURL, j.rest)
		if err != nil {
			return nil, err
		}
		if d.job, err = c.Job(ctx, j.jobID); err != nil {
			return nil, err
		}
		if d.target == "" {
			r, err := d.job.Latest()
			if err != nil {
				return nil, err
			}
			if d.target, err = flinkrest.SourceURI(r.ExternalPath); err != nil {
				return nil, err
			}
			kind := "checkpoint"
			if r.Savepoint {
				kind = "savepoint"
			}
			d.choice = &pb.CheckpointChoice{Uri: d.target, Kind: kind, CheckpointId: r.ID, CompletedAtMs: r.CompletedAt, AgeMs: r.Age.Milliseconds(), Origin: "flink-rest", Note: r.Note}
		}
	}
	switch {
	case j.latest:
		var err error
		if d.choice, err = chooseLatest(cmd, d.target); err != nil {
			return nil, err
		}
		d.target = d.choice.GetUri()
	case d.choice != nil:
		fmt.Fprintf(cmd.ErrOrStderr(), "preflight: chose %s: %s\n", d.target, d.choice.GetNote())
	}
	in, closeFn, err := openInput(cmd, d.target)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	if d.layout, err = eng.ReadLayout(ctx, in); err != nil {
		return nil, err
	}
	if d.job != nil {
		d.placement = placement.Place(d.layout, d.job)
	}
	return d, nil
}

// chooseLatest finds the newest complete snapshot in the folder dir (latestSnapshot) and names
// it on stderr.
func chooseLatest(cmd *cobra.Command, dir string) (*pb.CheckpointChoice, error) {
	snap, note, err := latestSnapshot(cmd.Context(), dir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "preflight: chose %s: %s\n", snap.URI, note)
	return &pb.CheckpointChoice{Uri: snap.URI, Kind: snap.Kind, CheckpointId: snap.ID, CompletedAtMs: snap.ModTime.UnixMilli(),
		AgeMs: time.Since(snap.ModTime).Milliseconds(), Origin: "storage", Note: note}, nil
}

// latestSnapshot finds the newest snapshot in a folder with the user's own access: the
// allowlist is the folder itself.
func latestSnapshot(ctx context.Context, dir string) (source.Snapshot, string, error) {
	allow := dir
	if p, local := source.FilePath(dir); local {
		allow = p
	}
	o, err := source.New(source.Config{Allow: []string{allow}})
	if err != nil {
		return source.Snapshot{}, "", fmt.Errorf("%w: %v", errInput, err)
	}
	defer o.Close()
	return o.Latest(ctx, dir)
}

// withJobVersion fills in the cluster's Flink version from the REST API when not given.
func withJobVersion(opts *pb.CheckOptions, job *flinkrest.Job) {
	if job != nil && opts.GetFlinkVersion() == "" {
		opts.FlinkVersion = job.FlinkVersion
	}
}

// discoveredReport runs a check of a running job (--flink-rest, in-process or on the server) or
// of the newest checkpoint in a folder the server reads (--latest URI --server; check's RunE
// checks a folder found here as a file). chart asks for the rows of the text report's chart, not every
// subtask (chart_subtasks), unless opts asks for every subtask. spill: the operators are
// spilled as they are checked in-process (checkSpilled) or as a server's answer arrives
// (spilledReport), not joined; close the spill returned once written.
func discoveredReport(cmd *cobra.Command, args []string, plan *pb.RescalePlan, opts *pb.CheckOptions, remote remoteFlags, j *jobFlags, chart, spill bool) (*pb.RescaleReport, *report.OperatorSpill, error) {
	ctx := cmd.Context()
	askChartRows(opts, chart)
	if remote.server != "" {
		opts = remote.sendCode(opts)
		return discoveredOnServer(cmd, args, plan, opts, remote, j, spill)
	}
	eng, err := newEngine(cmd, remote.catalogs, remote.jobJars)
	if err != nil {
		return nil, nil, err
	}
	d, err := j.discover(cmd, args, eng)
	if err != nil {
		return nil, nil, err
	}
	withJobVersion(opts, d.job)
	check := func(pieces engine.OperatorPieces) (*pb.RescaleReport, error) {
		return eng.Check(ctx, engine.Request{Layout: d.layout, Source: d.target, Plan: plan, Options: opts, Placement: d.placement,
			Pieces: pieces, StatesInPieces: pieces != nil})
	}
	var rep *pb.RescaleReport
	var sp *report.OperatorSpill
	if spill {
		rep, sp, err = checkSpilled(check)
	} else {
		rep, err = check(nil)
	}
	if err != nil {
		return nil, nil, err
	}
	rep.CheckpointChoice = d.choice
	return rep, sp, nil
}

// discoveredOnServer is discoveredReport with a server: the server reads the job and picks the
// checkpoint (CheckRescaleStream with job or latest); the newest snapshot of a local folder
// (--latest without --flink-rest) is found here and checked as a file is (check's RunE).
func discoveredOnServer(cmd *cobra.Command, args []string, plan *pb.RescalePlan, opts *pb.CheckOptions, remote remoteFlags, j *jobFlags, spill bool) (*pb.RescaleReport, *report.OperatorSpill, error) {
	ctx := cmd.Context()
	req := &pb.CheckRescaleRequest{Job: j.pbJob(), Plan: plan, Options: opts}
	if len(args) > 0 {
		target := args[0]
		if !isURI(target) {
			return nil, nil, usagef("with --server and --flink-rest, CHECKPOINT must be a URI the server can read (or omit it)")
		}
		req.Checkpoint = &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: target}, Latest: j.latest}
	}
	c, err := dial(ctx, remote)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	var notes serverNotes
	check := func(fn func(*pb.ReportPiece) error) error { return c.CheckInPieces(notes.context(ctx), req, fn) }
	var rep *pb.RescaleReport
	var sp *report.OperatorSpill
	if spill {
		// The server answers in pages, the operators as it converts them: the CLI need not hold
		// more than one.
		rep, sp, err = spillPieces(check)
	} else {
		var joined client.Joiner
		err = check(joined.Add)
		rep = joined.Report()
	}
	notes.print(cmd.ErrOrStderr())
	if err == nil && rep.GetCheckpointChoice() != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "preflight: chose %s: %s\n", rep.GetCheckpointChoice().GetUri(), rep.GetCheckpointChoice().GetNote())
	}
	return rep, sp, err
}
