package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/lifecycle"
	"github.com/flinkpreflight/preflight/internal/report"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

type pruneFlags struct {
	operator     string
	state        string
	out          string
	dryRun       bool
	force        bool
	jobOperators []string
	frameSize    int64
	output       string
	catalogs     []string
}

func newPruneCommand() *cobra.Command {
	var f pruneFlags
	cmd := &cobra.Command{
		Use:   "prune CHECKPOINT --operator ID|uid|name [--state NAME] --out DIR",
		Short: "Write a new savepoint without an orphaned operator state (or a whole operator)",
		Long: `prune writes a new savepoint _metadata into --out (a new or empty folder, never the source) without
the chosen operator state: one named list, union or broadcast state (--state), or the whole operator.
The source is only read. State files the kept state references relative to the savepoint folder
are hard-linked (or copied) into --out, so the new savepoint restores from where it is.

Before it reports success, prune re-reads the new file with the codec, checks that every other
operator's encoded bytes are identical to the original's and that the removed state is gone,
and runs check on the result. Pruning keyed state (a whole operator with keyed state) or state
of an operator the job still has (--job-operators) needs --force.`,
		Example: `  preflight prune testdata/kafka-orphan-union --operator kafka-source --state topic-partition-offset-states --out /tmp/pruned
  preflight prune ./savepoint-1a2b3c --operator 61252f73469d3ffba207c548d29a0267 --out ./savepoint-pruned --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := parseOutput(f.output)
			frame := f.frameSize
			if err != nil {
				return err
			}
			eng, err := newEngine(cmd, f.catalogs, nil)
			if err != nil {
				return err
			}
			res, err := lifecycle.PruneSavepoint(cmd.Context(), lifecycle.SavepointRequest{
				Source: args[0], Out: f.out, DryRun: f.dryRun,
				Select: lifecycle.Selector{Operator: f.operator, State: f.state},
				Opts:   lifecycle.PruneOptions{Force: f.force, JobOperators: f.jobOperators},
			})
			if err != nil {
				if errors.Is(err, lifecycle.ErrUsage) {
					return usageError{err}
				}
				return err
			}
			opts := &pb.CheckOptions{RpcFrameSizeBytes: frame}
			before, err := eng.Check(cmd.Context(), engine.Request{Layout: res.Original.Layout(), Source: res.Source, Plan: &pb.RescalePlan{}, Options: opts})
			if err != nil {
				return fmt.Errorf("check on the source: %w", err)
			}
			after, err := eng.Check(cmd.Context(), engine.Request{Layout: res.Pruned.Layout(), Source: res.Out, Plan: &pb.RescalePlan{}, Options: opts})
			if err != nil {
				return fmt.Errorf("check on the pruned savepoint: %w", err)
			}
			return lifecycle.WritePrune(cmd.OutOrStdout(), format, &lifecycle.PruneSummary{SavepointResult: res, Verified: true,
				VerdictBefore: report.VerdictName(before.GetVerdict()), VerdictAfter: report.VerdictName(after.GetVerdict()),
				FindingsBefore: findingIDs(before), FindingsAfter: findingIDs(after)})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.operator, "operator", "", "the operator: OperatorID in hex (or its first 8+ digits), uid, or name (required)")
	fl.StringVar(&f.state, "state", "", "the named operator state to remove; without it the whole operator is removed")
	fl.StringVar(&f.out, "out", "", "new or empty folder for the pruned savepoint (required)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "show the plan and verify it in memory; write nothing")
	fl.BoolVar(&f.force, "force", false, "allow removing keyed state or state of an operator the job still has")
	fl.StringSliceVar(&f.jobOperators, "job-operators", nil, "IDs or uids of the operators of the job that will restore the result (enables the still-in-the-job safety check)")
	sizeFlag(fl, &f.frameSize, "frame-size", 10<<20, "RPC frame size for the check run on the result")
	catalogFlag(cmd, &f.catalogs)
	outputFlag(cmd, &f.output)
	return cmd
}

func findingIDs(r *pb.RescaleReport) []string {
	ids := []string{}
	for _, f := range r.GetFindings() {
		ids = append(ids, f.GetRuleId())
	}
	return ids
}
