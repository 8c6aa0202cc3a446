package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// newInspectCommand is `preflight inspect`: the operators and states of one checkpoint, or of
// many (several paths, or a folder walked for _metadata files).
func newInspectCommand() *cobra.Command {
	var output string
	var remote remoteFlags
	cmd := &cobra.Command{
		Use:   "inspect CHECKPOINT [CHECKPOINT ...]",
		Short: "Describe the operators and states of checkpoints or savepoints",
		Long: `inspect describes the operators and states of a checkpoint or savepoint.

CHECKPOINT is ` + checkpointForms + `.

Several local CHECKPOINTs, or a folder without a _metadata of its own (a job's checkpoint
folder, a folder of savepoints), are inspected together: a folder is walked for files named
_metadata (symbolic links are not followed; at most 100,000 files), each argument's files in
path order. The files are decoded in parallel with reused buffers, and one report per file is
printed in that order: text and Markdown one after another. JSON is always one array of
single-file objects, also for one file, so a script reads any number of files the same way. A file that cannot be read or is malformed is reported on stderr with its
path (and the byte offset for a malformed one) after the other files are printed, and the exit
code is then 2. With --server only one CHECKPOINT can be named.`,
		Example: `  preflight inspect testdata/compact-sink
  preflight inspect chk-41 chk-42 savepoint-7f3a -o markdown
  preflight inspect /flink/checkpoints/4a7f0c1e9b2d3a5c6e8f0a1b2c3d4e5f -o json | jq '.[].checkpoint.sizeBytes'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("name a CHECKPOINT (a _metadata file, a checkpoint folder or a URI)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := parseOutput(output)
			if err != nil {
				return err
			}
			if len(args) == 1 && (remote.server != "" || !isLocal(args[0]) || hasMetadata(args[0])) {
				resp, err := inspectReport(cmd, args[0], remote)
				if err != nil {
					return err
				}
				if format == report.JSON {
					return writeInspectJSONArray(cmd.OutOrStdout(), resp)
				}
				return report.WriteInspect(cmd.OutOrStdout(), format, resp)
			}
			if remote.server != "" {
				return usagef("--server inspects one CHECKPOINT; name one, or run without --server to inspect several")
			}
			files, err := inspectTargets(cmd.Context(), args)
			if err != nil {
				return err
			}
			eng, err := newEngine(cmd, remote.catalogs, remote.jobJars)
			if err != nil {
				return err
			}
			return inspectFiles(cmd.Context(), eng, files, format, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	outputFlag(cmd, &output)
	remote.register(cmd)
	return cmd
}

// writeInspectJSONArray writes one inspection as a JSON array of one object: the shape of
// several files' JSON.
func writeInspectJSONArray(w io.Writer, resp *pb.InspectCheckpointResponse) error {
	var buf bytes.Buffer
	if err := report.WriteInspect(&buf, report.JSON, resp); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "[\n%s\n]\n", bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return err
}

// inspectReport runs an inspection in-process or on the server.
func inspectReport(cmd *cobra.Command, target string, remote remoteFlags) (*pb.InspectCheckpointResponse, error) {
	ctx := cmd.Context()
	if remote.server == "" {
		return runEmbedded(cmd, target, remote, func(eng *engine.Engine, in engine.Input) (*pb.InspectCheckpointResponse, error) {
			return eng.Inspect(ctx, in)
		})
	}
	c, err := dial(ctx, remote)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	src := &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: target}}
	if !isURI(target) {
		// InspectCheckpoint has no upload form; local files go inline.
		f, _, err := openLocal(target)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errInput, err)
		}
		src = &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: b}}
	}
	return c.Inspect(ctx, &pb.InspectCheckpointRequest{Checkpoint: src})
}

// maxInspectFiles bounds the _metadata files one inspect collects, so that naming the root of
// a large file system fails early instead of listing it whole.
const maxInspectFiles = 100_000

// inspectFile is one _metadata to decode: its path and the name its report shows.
type inspectFile struct {
	path, name string
	size       int64
}

// inspectTargets resolves local CHECKPOINT arguments into _metadata files, in argument order:
// a file is itself, a folder with a _metadata is that file, and any other folder is walked for
// regular files named _metadata (in lexical path order, symbolic links not followed).
func inspectTargets(ctx context.Context, args []string) ([]inspectFile, error) {
	var out []inspectFile
	for _, arg := range args {
		p, local := source.FilePath(arg)
		if !local {
			return nil, usagef("%s: several checkpoints are inspected from local paths only; name a URI on its own", arg)
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			// A file, or a path that cannot be read: its decode reports it in its turn.
			var size int64
			if err == nil {
				size = fi.Size()
			}
			out = append(out, inspectFile{path: p, name: arg, size: size})
			continue
		}
		if mi, err := os.Stat(filepath.Join(p, "_metadata")); err == nil && !mi.IsDir() {
			out = append(out, inspectFile{path: filepath.Join(p, "_metadata"), name: arg, size: mi.Size()})
			continue
		}
		root := p
		if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			// The folder named on the command line is followed even when it is a link (a
			// trailing separator makes WalkDir read the link's target); links inside it are not.
			root = p + string(filepath.Separator)
		}
		found := len(out)
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				return err
			}
			// WalkDir reports a symbolic link as such and does not descend into it.
			if d.Name() != "_metadata" || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			if len(out) >= maxInspectFiles {
				return usagef("%s: more than %d _metadata files; name a smaller folder", arg, maxInspectFiles)
			}
			out = append(out, inspectFile{path: path, name: path, size: info.Size()})
			return nil
		})
		walked := out[found:]
		found = len(walked)
		slices.SortFunc(walked, func(a, b inspectFile) int { return naturalCompare(a.path, b.path) })
		var ue usageError
		switch {
		case errors.As(err, &ue), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("%w: %v", errInput, err)
		case found == 0:
			return nil, fmt.Errorf("%w: no _metadata file in %s or its subfolders", errInput, arg)
		}
	}
	return out, nil
}

// naturalCompare orders paths as a person reads them: runs of digits compare by value, so
// chk-9 comes before chk-10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da == 0 || db == 0 {
			if a[0] != b[0] {
				return cmp.Compare(a[0], b[0])
			}
			a, b = a[1:], b[1:]
			continue
		}
		na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
		if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb), cmp.Compare(da, db)); c != 0 {
			return c
		}
		a, b = a[da:], b[db:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitPrefix returns the number of leading ASCII digits of s.
func digitPrefix(s string) int {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// inspectFiles decodes files with checkpoint.ReadLayoutFiles (a bounded worker pool, at most
// workers + 1 Layouts alive at once) and writes one report per file in order. Files that fail are reported on stderr as they come; the error returned afterwards
// (exit code 2 unless the failure was an interruption) counts them.
func inspectFiles(ctx context.Context, eng *engine.Engine, files []inspectFile, format report.Format, stdout, stderr io.Writer) error {
	var largest int64
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
		largest = max(largest, f.size)
	}
	// The memory model per file, times the Layouts that can be alive at once.
	limitMemory(largest * int64(3*workersFor(len(files))))
	var failed int
	var first error
	written := 0
	if format == report.JSON {
		if _, err := io.WriteString(stdout, "[\n"); err != nil {
			return err
		}
	}
	err := checkpoint.ReadLayoutFiles(ctx, paths, workersFor(len(files)), func(i int, l *checkpoint.Layout, err error) error {
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			if !strings.Contains(err.Error(), files[i].path) {
				err = fmt.Errorf("%s: %w", files[i].path, err)
			}
			fmt.Fprintln(stderr, "preflight:", err)
			failed++
			if first == nil {
				first = err
			}
			return nil
		}
		resp, err := eng.InspectLayout(ctx, l, files[i].name)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := report.WriteInspectBody(&buf, format, resp); err != nil {
			return err
		}
		if written > 0 {
			sep := "\n\n" // a blank line between text or Markdown reports
			if format == report.JSON {
				sep = ",\n"
			}
			if _, err := io.WriteString(stdout, sep); err != nil {
				return err
			}
		}
		written++
		_, err = stdout.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	})
	if err != nil {
		return err
	}
	end := ""
	switch {
	case format == report.JSON:
		end = "\n]\n"
	case written > 0:
		end = "\n" // the last report's own newline
	}
	if _, err := io.WriteString(stdout, end); err != nil {
		return err
	}
	if written > 0 {
		// The columns' legend once, after the last report (as WriteInspect ends a single one).
		if err := report.WriteInspectLegend(stdout, format); err != nil {
			return err
		}
	}
	if failed > 0 {
		var fe *checkpoint.FormatError
		if !errors.As(first, &fe) {
			first = fmt.Errorf("%w: %w", errInput, first)
		}
		return fmt.Errorf("%d of %d checkpoints could not be inspected; the first: %w", failed, len(files), first)
	}
	return nil
}

// workersFor is the number of decoding goroutines for n files: GOMAXPROCS, but no more than
// the files.
func workersFor(n int) int {
	return max(min(n, runtime.GOMAXPROCS(0)), 1)
}
