package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/lifecycle"
	"github.com/flinkpreflight/preflight/internal/report"
)

type diffFlags struct {
	lifecycleFlags
	jobOperators []string
}

func newDiffCommand(code *int) *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Compare two checkpoints operator by operator and state by state",
		Long: `diff compares two checkpoints or savepoints, OLD and NEW: per operator and per state what was
added or removed, mode, parallelism and max parallelism changes, element counts and bytes before
→ after, key-group coverage, and the _metadata size. It reports growth signatures: a UNION state growing by about
the parallelism per restore (LC301), state carried for an operator the job no longer has (LC302,
needs --job-operators), _metadata at or on course to exceed the RPC frame size (LC303), and state
that disappeared between the two (LC304). Both files are read as bounded-memory layouts.

OLD and NEW are each ` + checkpointForms + `.

Exit codes: 0, or 1 when a finding is at or above --fail-on; 2 input error; 3 internal error.`,
		Example: `  preflight diff testdata/kafka-orphan-union-series/savepoint-5f43eb-9740647968a9 testdata/kafka-orphan-union-series/savepoint-5f43eb-118d11ae21f7
  preflight diff s3://bucket/ckpt/job/chk-41 s3://bucket/ckpt/job/chk-42 -o markdown`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, rank, err := f.parse()
			if err != nil {
				return err
			}
			oldL, err := readLayout(cmd, args[0])
			if err != nil {
				return err
			}
			newL, err := readLayout(cmd, args[1])
			if err != nil {
				return err
			}
			d := lifecycle.Diff(oldL, newL, args[0], args[1], lifecycle.DiffOptions{FrameSize: f.frameSize, JobOperators: f.jobOperators})
			if err := lifecycle.WriteDiff(cmd.OutOrStdout(), format, d); err != nil {
				return err
			}
			*code = findingsExitCode(d.Findings, rank)
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringSliceVar(&f.jobOperators, "job-operators", nil, "IDs or uids of the job's operators (enables LC302, state of vanished operators)")
	return cmd
}

// readLayout decodes one checkpoint (local or remote) into a bounded-memory layout.
func readLayout(cmd *cobra.Command, target string) (*checkpoint.Layout, error) {
	in, closeFn, err := openInput(cmd, target)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return engine.New().ReadLayout(cmd.Context(), in)
}

// lifecycleFlags are the flags diff and trend share.
type lifecycleFlags struct {
	frameSize int64
	failOn    string
	output    string
}

func (f *lifecycleFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	sizeFlag(fl, &f.frameSize, "frame-size", 10<<20, "RPC frame size of the cluster (pekko.framesize)")
	fl.StringVar(&f.failOn, "fail-on", "error", "lowest finding severity that exits 1: info, warning or error")
	outputFlag(cmd, &f.output)
}

// parse reads --output and --fail-on.
func (f *lifecycleFlags) parse() (report.Format, int, error) {
	format, err := parseOutput(f.output)
	if err != nil {
		return format, 0, err
	}
	rank, err := failRank(f.failOn)
	return format, rank, err
}

func failRank(s string) (int, error) {
	switch strings.ToLower(s) {
	case "info":
		return 1, nil
	case "warning":
		return 2, nil
	case "error":
		return 3, nil
	}
	return 0, usagef("--fail-on %q: want info, warning or error", s)
}

func findingsExitCode(fs []lifecycle.Finding, rank int) int {
	for _, f := range fs {
		r := map[string]int{"INFO": 1, "WARNING": 2, "ERROR": 3}[f.Severity]
		if r >= rank {
			return exitDeny
		}
	}
	return exitAllow
}
