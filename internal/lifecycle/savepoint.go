package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flinkpreflight/preflight/internal/atomicfile"
	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/source"
)

// SavepointRequest is a prune of a local savepoint folder into a new one.
type SavepointRequest struct {
	Source string // a _metadata file or the folder holding it (local)
	Out    string // the new savepoint folder: must not exist, or be empty; not the source
	Select Selector
	Opts   PruneOptions
	DryRun bool // plan and verify in memory; write nothing
}

// FileAction is what happened to one state file the kept state references relative to the
// savepoint folder.
type FileAction struct {
	Path   string `json:"path"`   // relative to the savepoint folder
	Action string `json:"action"` // "linked", "copied", "missing" (absent in the source too), or "would link/copy" in a dry run
	Bytes  int64  `json:"bytes,omitempty"`
}

// SavepointResult is the outcome of PruneSavepoint.
type SavepointResult struct {
	Source      string               `json:"source"` // the source _metadata
	Out         string               `json:"out"`    // the new _metadata (not written in a dry run)
	DryRun      bool                 `json:"dry_run"`
	Plan        *PrunePlan           `json:"plan"`
	SizeBefore  int64                `json:"size_before"`
	SizeAfter   int64                `json:"size_after"`
	Files       []FileAction         `json:"files,omitempty"`
	Relocation  string               `json:"relocation"` // how relative handles stay valid
	Original    *checkpoint.Metadata `json:"-"`
	Pruned      *checkpoint.Metadata `json:"-"` // as re-read from the written bytes
	PrunedBytes []byte               `json:"-"`
}

// PruneSavepoint reads the source savepoint, prunes it, verifies the result (Verify) and, unless
// DryRun, writes it to Out: the state files that kept handles reference relative to the
// savepoint folder are hard-linked into Out (copied when a link is impossible), then _metadata is
// written to a temporary file in Out, fsynced, renamed and the folder fsynced. Relative handles
// are never rewritten, so every untouched operator stays byte-identical. The source is only read.
// On failure nothing it created is left behind.
func PruneSavepoint(ctx context.Context, req SavepointRequest) (*SavepointResult, error) {
	srcFile, srcDir, err := localMetadata(req.Source)
	if err != nil {
		return nil, err
	}
	outDir, outExists, err := checkOut(req.Out, srcDir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(srcFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	orig, err := checkpoint.Read(cancel.Reader(ctx, f))
	f.Close()
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(srcFile)
	if err != nil {
		return nil, err
	}
	pruned, plan, err := Prune(orig, req.Select, req.Opts)
	if err != nil {
		return nil, err
	}
	b, err := Encode(pruned)
	if err != nil {
		return nil, fmt.Errorf("encoding the pruned savepoint: %w", err)
	}
	reread, err := Verify(orig, plan, b)
	if err != nil {
		return nil, err
	}
	res := &SavepointResult{Source: srcFile, Out: filepath.Join(outDir, "_metadata"), DryRun: req.DryRun, Plan: plan,
		SizeBefore: st.Size(), SizeAfter: int64(len(b)), Original: orig, Pruned: reread, PrunedBytes: b}
	res.Relocation = "no state handle is relative to the savepoint folder; the new _metadata can live anywhere"
	if len(plan.RelativeFiles) > 0 {
		res.Relocation = fmt.Sprintf("%d state files referenced relative to the savepoint folder are hard-linked (or copied) into the new folder; handles are not rewritten", len(plan.RelativeFiles))
	}
	if req.DryRun {
		for _, p := range plan.RelativeFiles {
			fa := FileAction{Path: p, Action: "would link/copy"}
			if fi, err := os.Stat(filepath.Join(srcDir, filepath.FromSlash(p))); err != nil {
				fa.Action = "missing"
			} else {
				fa.Bytes = fi.Size()
			}
			res.Files = append(res.Files, fa)
		}
		return res, nil
	}
	// The folder is created only now, after the plan is verified, so a refusal leaves nothing.
	created := false
	if !outExists {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: creating --out: %v", ErrUsage, err)
		}
		created = true
	}
	var written []string
	ok := false
	defer func() {
		if ok {
			return
		}
		for i := len(written) - 1; i >= 0; i-- {
			os.Remove(written[i])
		}
		if created {
			os.RemoveAll(outDir)
		}
	}()
	for _, p := range plan.RelativeFiles {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fa, dst, err := relocate(srcDir, outDir, p)
		if err != nil {
			return nil, err
		}
		if dst != "" {
			written = append(written, dst)
		}
		res.Files = append(res.Files, fa)
	}
	if err := atomicWrite(outDir, "_metadata", b); err != nil {
		return nil, err
	}
	ok = true
	return res, nil
}

// localMetadata resolves a local _metadata file or folder.
func localMetadata(src string) (file, dir string, err error) {
	path, local := source.FilePath(src)
	if !local {
		return "", "", usagef("%s: prune writes a local savepoint and reads a local one; copy the savepoint folder from the object store first", src)
	}
	src = path
	fi, err := os.Stat(src)
	if err != nil {
		return "", "", usagef("no such file or folder: %s", src)
	}
	file = src
	if fi.IsDir() {
		file = filepath.Join(src, "_metadata")
		if _, err := os.Stat(file); err != nil {
			return "", "", usagef("%s is a folder without a _metadata file", src)
		}
	}
	file, err = filepath.Abs(file)
	if err != nil {
		return "", "", err
	}
	if r, err := filepath.EvalSymlinks(file); err == nil {
		file = r
	}
	return file, filepath.Dir(file), nil
}

// checkOut validates the output folder: new or empty, not the source folder and not inside it
// (either would change the source). exists says whether the (empty) folder is already there.
func checkOut(out, srcDir string) (dir string, exists bool, err error) {
	if out == "" {
		return "", false, usagef("--out is required: a new or empty folder for the pruned savepoint")
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", false, err
	}
	resolved := abs
	fi, statErr := os.Stat(abs)
	if statErr == nil {
		if !fi.IsDir() {
			return "", false, usagef("--out %s exists and is not a folder", out)
		}
		if resolved, err = filepath.EvalSymlinks(abs); err != nil {
			return "", false, err
		}
	} else if !errors.Is(statErr, fs.ErrNotExist) {
		return "", false, fmt.Errorf("%w: --out %s: %v", ErrUsage, out, statErr)
	} else if parent, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		resolved = filepath.Join(parent, filepath.Base(abs))
	}
	if resolved == srcDir {
		return "", false, usagef("--out %s is the source savepoint folder: prune never writes in place", out)
	}
	if rel, err := filepath.Rel(srcDir, resolved); err == nil && filepath.IsLocal(rel) {
		return "", false, usagef("--out %s is inside the source savepoint folder %s, which must stay unchanged", out, srcDir)
	}
	if statErr == nil {
		entries, err := os.ReadDir(abs)
		if err != nil {
			return "", false, fmt.Errorf("%w: --out %s: %v", ErrUsage, out, err)
		}
		if len(entries) > 0 {
			return "", false, usagef("--out %s is not empty (%d entries): prune writes only into a new or empty folder", out, len(entries))
		}
		return resolved, true, nil
	}
	return resolved, false, nil
}

// relocate makes srcDir/rel available as outDir/rel: a hard link, or a copy across
// filesystems. A file absent in the source is reported, not invented: the source savepoint
// cannot restore it either. A path that leaves the savepoint folder is refused.
func relocate(srcDir, outDir, rel string) (FileAction, string, error) {
	local := filepath.FromSlash(rel)
	if !filepath.IsLocal(local) {
		return FileAction{}, "", usagef("a kept state handle's relative path %q leaves the savepoint folder; cannot relocate it safely", rel)
	}
	src := filepath.Join(srcDir, local)
	fi, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return FileAction{Path: rel, Action: "missing"}, "", nil
	}
	if err != nil {
		return FileAction{}, "", err
	}
	dst := filepath.Join(outDir, local)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return FileAction{}, "", err
	}
	if err := os.Link(src, dst); err == nil {
		return FileAction{Path: rel, Action: "linked", Bytes: fi.Size()}, dst, nil
	}
	in, err := os.Open(src)
	if err != nil {
		return FileAction{}, "", err
	}
	defer in.Close()
	if err := atomicWriteFrom(filepath.Dir(dst), filepath.Base(dst), in); err != nil {
		return FileAction{}, "", err
	}
	return FileAction{Path: rel, Action: "copied", Bytes: fi.Size()}, dst, nil
}

func atomicWrite(dir, name string, b []byte) error {
	return atomicWriteFrom(dir, name, bytes.NewReader(b))
}

// atomicWriteFrom writes dir/name through a temporary file in dir: write, fsync, rename, fsync
// the folder, so a crash leaves either no file or the whole file. It never replaces an existing
// file.
func atomicWriteFrom(dir, name string, r io.Reader) error {
	dst := filepath.Join(dir, name)
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("%s already exists; not replacing it", dst)
	}
	return atomicfile.Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	})
}
