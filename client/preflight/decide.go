package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/decision"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Exit codes of `preflight decide` besides 0 (APPROVE), 1 (VETO), 2 (usage) and 3 (internal).
const exitAdjust = 4 // ADJUST: apply the decided parallelism instead of the proposal

func newDecideCommand(code *int) *cobra.Command {
	var (
		set      []string
		align    bool
		failOpen bool
		check    checkFlags // what decide shares with check (registerShared) and its --flink-version, --fail-on, ...
	)
	cmd := &cobra.Command{
		Use:   "decide [CHECKPOINT] --set VERTEX=P ...",
		Short: "Approve, adjust or veto an autoscaler's proposed parallelism per vertex",
		Long: `decide answers an autoscaler: for every vertex in --set it approves the proposed parallelism,
adjusts it to the nearest safe parallelism in the direction of the proposal (within the max
parallelism, and dividing it with --align-to-key-groups), or vetoes it, with the finding IDs behind
each answer. The job and its newest checkpoint come from --flink-rest/--job, or CHECKPOINT is given.

When the job or the checkpoint cannot be read, the answer follows --fail-open (approve as proposed)
or, by default, fails closed (veto), and says so.

Exit codes: 0 APPROVE, 1 VETO, 4 ADJUST, 2 usage or input error, 3 internal or remote error.`,
		Example: `  preflight decide --flink-rest http://jobmanager:8081 --job 4a7f0c1e9b2d3a5c6e8f0a1b2c3d4e5f --set 0d9ffb4f280d028d86dadba01ac205d7=8
  preflight decide testdata/compact-sink --set compact-operator=8 -o json`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := check.job.validate(args); err != nil {
				return err
			}
			if len(set) == 0 {
				return usagef("name the proposal with --set VERTEX=P")
			}
			check.set = set
			plan, opts, format, err := check.parse()
			if err != nil {
				return err
			}
			req := &pb.DecideRequest{Job: check.job.pbJob(), ProposedParallelism: plan.GetVertexParallelism(), Options: opts, AlignToKeyGroups: align}
			if failOpen {
				req.OnFailure = pb.FailurePolicy_FAILURE_POLICY_FAIL_OPEN
			}
			if check.remote.server != "" {
				check.verify.options(req.Options)
			}
			resp, err := runDecide(cmd, args, req, &check.job, check.remote, &check.verify)
			if err != nil {
				return err
			}
			if resp.GetFailed() {
				fmt.Fprintln(cmd.ErrOrStderr(), "preflight: the check could not run:", resp.GetFailure())
			}
			if err := report.WriteDecision(cmd.OutOrStdout(), format, resp); err != nil {
				return err
			}
			*code = decisionExitCode(resp.GetAction())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&set, "set", nil, "proposed parallelism VERTEX=P (repeatable); VERTEX is a JobVertexID hex, or any --set key of check")
	fl.BoolVar(&align, "align-to-key-groups", false, "adjust only to parallelisms that divide the max parallelism")
	fl.BoolVar(&failOpen, "fail-open", false, "approve the proposal when the job or checkpoint cannot be read (default: veto)")
	fl.StringVar(&check.flinkVersion, "flink-version", "", "Flink version of the restoring cluster (default with --flink-rest: the cluster's)")
	fl.StringVar(&check.failOn, "fail-on", "error", "lowest severity that vetoes: info, warning or error")
	fl.BoolVar(&check.allowNonRestore, "allow-non-restored-state", false, "the restore uses --allowNonRestoredState")
	check.registerShared(cmd, true)
	return cmd
}

// runDecide decides in-process or on the server. In-process, failures to read the job or the
// checkpoint follow the failure policy as the server's do; usage errors stay errors.
func runDecide(cmd *cobra.Command, args []string, req *pb.DecideRequest, j *jobFlags, remote remoteFlags, verify *verifyFlags) (*pb.DecideResponse, error) {
	ctx := cmd.Context()
	if remote.server != "" {
		if len(args) > 0 {
			if !isURI(args[0]) {
				return nil, usagef("with --server, CHECKPOINT must be a URI the server can read (or use --flink-rest/--job)")
			}
			req.Checkpoint = &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: args[0]}, Latest: j.latest}
		}
		req.Options = remote.sendCode(req.Options)
		c, err := dial(ctx, remote)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		var notes serverNotes
		defer notes.print(cmd.ErrOrStderr())
		return c.Decide(notes.context(ctx), req)
	}
	eng, err := newEngine(cmd, remote.catalogs, remote.jobJars)
	if err != nil {
		return nil, err
	}
	d, err := j.discover(cmd, args, eng)
	if err != nil {
		if code, policy := failureCode(err); policy {
			return decision.Failed(req, code, err), nil
		}
		return nil, err
	}
	if req.Options == nil {
		req.Options = &pb.CheckOptions{}
	}
	withJobVersion(req.Options, d.job)
	in := decision.Input{Layout: d.layout, Source: d.target, Job: d.job, Placement: d.placement, Choice: d.choice, Request: req}
	if res := verify.run(ctx, d.target); res != nil {
		in.Files, in.FileFindings = res.Summary(), res.Findings()
	}
	return decision.Decide(ctx, eng, in)
}

// failureCode names a failure to read the job or checkpoint, and whether the failure policy
// answers it (usage errors are not failures of the check).
func failureCode(err error) (string, bool) {
	var re *flinkrest.Error
	var se *source.Error
	var fe *checkpoint.FormatError
	var ue usageError
	switch {
	case errors.As(err, &ue):
		return "", false
	case errors.As(err, &re):
		switch re.Kind {
		case flinkrest.NotFound:
			return "NOT_FOUND", true
		case flinkrest.FailedPrecondition:
			return "FAILED_PRECONDITION", true
		case flinkrest.Unavailable:
			return "UNAVAILABLE", true
		case flinkrest.PermissionDenied:
			return "PERMISSION_DENIED", true
		}
		return "", false
	case errors.As(err, &se):
		return strings.ToUpper(strings.ReplaceAll(se.Kind.String(), " ", "_")), se.Kind != source.Invalid
	case errors.As(err, &fe):
		return "INVALID_ARGUMENT", true // an unreadable checkpoint
	case errors.Is(err, errInput):
		return "NOT_FOUND", true
	}
	if st, ok := status.FromError(err); ok && st.Code() != codes.InvalidArgument && st.Code() != codes.Unknown {
		return st.Code().String(), true
	}
	return "", false
}

func decisionExitCode(a pb.DecisionAction) int {
	switch a {
	case pb.DecisionAction_DECISION_ACTION_APPROVE:
		return exitAllow
	case pb.DecisionAction_DECISION_ACTION_ADJUST:
		return exitAdjust
	}
	return exitDeny
}
