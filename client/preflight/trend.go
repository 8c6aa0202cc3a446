package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/lifecycle"
	"github.com/flinkpreflight/preflight/internal/source"
)

type trendFlags struct {
	lifecycleFlags
	top int
}

func newTrendCommand(code *int) *cobra.Command {
	var f trendFlags
	cmd := &cobra.Command{
		Use:   "trend LOCATION [CHECKPOINT ...]",
		Short: "Follow _metadata size and the largest states over a series of checkpoints, with a frame-size forecast",
		Long: `trend reads the _metadata of a series of checkpoints of one job (each streamed into a
bounded-memory layout; local files on parallel workers with reused buffers, a few layouts held at
once at most), and prints a table of the _metadata size and the
largest states per checkpoint, the growth rate, and a forecast of when _metadata exceeds the RPC
frame size. LOCATION is a job's checkpoint folder (local, s3://, gs://, azblob://) whose complete
chk-N and savepoint-* folders are read; or name several checkpoints (files, folders or URIs).
Points are ordered by the checkpoint ID stored in each _metadata.

Exit codes: 0, or 1 when a finding is at or above --fail-on; 2 input error; 3 internal error.`,
		Example: `  preflight trend testdata/kafka-orphan-union-series
  preflight trend s3://bucket/checkpoints/4a7f0c1e9b2d3a5c6e8f0a1b2c3d4e5f -o markdown
  preflight trend ./chk-40 ./chk-41 ./chk-42`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, rank, err := f.parse()
			if err != nil {
				return err
			}
			targets := args
			if len(args) == 1 && !hasMetadata(args[0]) {
				if targets, err = listSnapshots(cmd.Context(), args[0]); err != nil {
					return err
				}
			}
			tb := lifecycle.NewTrend(f.frameSize, f.top)
			if allLocal(targets) {
				err = readLocalLayouts(cmd.Context(), targets, tb.Add)
			} else {
				for _, t := range targets {
					l, rerr := readLayout(cmd, t)
					if rerr != nil {
						return fmt.Errorf("%s: %w", t, rerr)
					}
					tb.Add(l, t)
				}
			}
			if err != nil {
				return err
			}
			r := tb.Result()
			if err := lifecycle.WriteTrend(cmd.OutOrStdout(), format, r); err != nil {
				return err
			}
			*code = findingsExitCode(r.Findings, rank)
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().IntVar(&f.top, "top", 3, "largest states shown per checkpoint")
	return cmd
}

// hasMetadata reports whether target is itself one checkpoint: a remote _metadata URI, a local
// file, or a local folder holding a _metadata.
func hasMetadata(target string) bool {
	p, local := source.FilePath(target)
	if !local {
		return strings.HasSuffix(target, "/_metadata")
	}
	fi, err := os.Stat(p)
	if err != nil {
		return true // let the read report the missing path
	}
	if !fi.IsDir() {
		return true
	}
	_, err = os.Stat(filepath.Join(p, "_metadata"))
	return err == nil
}

// listSnapshots lists the complete snapshots of a job's checkpoint folder. The CLI runs with the
// user's own rights, so the allowlist is exactly that folder.
func listSnapshots(ctx context.Context, folder string) ([]string, error) {
	allow, given := folder, folder
	if !isURI(folder) {
		abs, err := filepath.Abs(folder)
		if err != nil {
			return nil, usagef("%s: %v", folder, err)
		}
		allow, folder = abs, abs
	}
	o, err := source.New(source.Config{Allow: []string{allow}})
	if err != nil {
		return nil, usagef("%s: %v", folder, err)
	}
	defer o.Close()
	snaps, incomplete, err := o.Snapshots(ctx, folder)
	if err != nil {
		return nil, err
	}
	if len(snaps) == 0 {
		return nil, fmt.Errorf("%w: no complete chk-N or savepoint-* folder with a _metadata in %s (incomplete: %s)", errInput, folder, strings.Join(incomplete, ", "))
	}
	out := make([]string, 0, len(snaps))
	for _, s := range snaps {
		if !isURI(given) && s.URI != folder {
			// Show the folders as the user named the parent, not as absolute paths.
			out = append(out, filepath.Join(given, filepath.Base(s.URI)))
			continue
		}
		if _, q, ok := strings.Cut(given, "?"); ok && isURI(given) && !strings.Contains(s.URI, "?") {
			// Object-store options (endpoint, region) of the folder apply to its snapshots too.
			out = append(out, s.URI+"?"+q)
			continue
		}
		out = append(out, s.URI)
	}
	return out, nil
}

// allLocal reports whether every target is a local path (or file:// URI).
func allLocal(targets []string) bool {
	for _, t := range targets {
		if _, local := source.FilePath(t); !local {
			return false
		}
	}
	return true
}

// readLocalLayouts decodes local checkpoints (files or folders holding a _metadata) with
// checkpoint.ReadLayoutFiles and hands each Layout to add in the order of targets. It stops at
// the first file that cannot be read, naming it.
func readLocalLayouts(ctx context.Context, targets []string, add func(*checkpoint.Layout, string)) error {
	paths := make([]string, len(targets))
	var largest int64
	for i, t := range targets {
		p, _ := source.FilePath(t)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			p = filepath.Join(p, "_metadata")
		}
		if fi, err := os.Stat(p); err == nil {
			largest = max(largest, fi.Size())
		}
		paths[i] = p
	}
	workers := workersFor(len(paths))
	limitMemory(largest * int64(3*workers)) // the Layouts alive at once, as inspect
	return checkpoint.ReadLayoutFiles(ctx, paths, workers, func(i int, l *checkpoint.Layout, err error) error {
		if err != nil {
			var fe *checkpoint.FormatError
			if ctx.Err() == nil && !errors.As(err, &fe) {
				err = fmt.Errorf("%w: %w", errInput, err)
			}
			if !strings.Contains(err.Error(), paths[i]) {
				err = fmt.Errorf("%s: %w", targets[i], err)
			}
			return err
		}
		add(l, targets[i])
		return nil
	})
}
