package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/buildinfo"
)

// run executes the CLI with args and returns the exit code; main is a thin wrapper so tests can
// drive the real command in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	code := exitAllow
	root := &cobra.Command{
		Use:           "preflight",
		Short:         "Check a Flink restore at a new parallelism before you do it",
		Long:          "preflight reads a Flink checkpoint or savepoint _metadata file, simulates Flink's own state\nredistribution at the planned parallelism, and reports whether the restore will work and what it will cost.\n\nExit codes: 0 allowed, 1 findings at or above --fail-on, 2 usage or input error, 3 internal or remote error;\ndecide: 0 approve, 1 veto, 4 adjust.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Get().String(),
	}
	// --timeout bounds the whole command (decode, simulation, rules, remote call); the engine
	// stops within a second of it and the command exits 3.
	var timeout time.Duration
	stopTimer := func() {}
	defer func() { stopTimer() }()
	root.PersistentFlags().DurationVar(&timeout, "timeout", 0, "give up after this long, e.g. 30s (0: no limit)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if timeout < 0 {
			return usagef("--timeout %s: must not be negative", timeout)
		}
		if timeout > 0 {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			stopTimer = cancel
			cmd.SetContext(ctx)
		}
		return nil
	}
	root.SetVersionTemplate("preflight {{.Version}}\n")
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newCheckCommand(&code), newInspectCommand(), newClasspathCommand(&code), newDecideCommand(&code), newPruneCommand(), newDiffCommand(&code), newTrendCommand(&code), newRulesCommand(), newAnalyzeCommand())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	if err := root.ExecuteContext(ctx); err != nil {
		if isCobraUsageError(err) {
			return exitCodeFor(usageError{err}, stderr)
		}
		return exitCodeFor(err, stderr)
	}
	return code
}

// isCobraUsageError recognises cobra's own argument errors (unknown command, wrong arg count).
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "accepts ", "requires ", "unknown flag", "unknown shorthand"} {
		if len(msg) >= len(prefix) && msg[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
