package statefiles

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Statter stats files inside an allowlist: *source.Opener.
type Statter interface {
	StatFile(ctx context.Context, uri string) (source.ObjectAttrs, error)
	Identity(ctx context.Context, uri string) string
}

// DefaultConcurrency is how many stats run at once: object stores answer HEAD requests in
// milliseconds each, so the latency, not the CPU, bounds the rate.
const DefaultConcurrency = 64

// Outcome is what the verification found for one file.
type Outcome struct {
	Kind   pb.FileProblemKind // UNSPECIFIED: verified (or not verified, see Checked)
	Actual int64              // the size found
	Detail string
	// Checked is false when the file was not verified (the budget ran out first).
	Checked bool
}

// Result is the verification of a checkpoint's files.
type Result struct {
	Files    []File
	Outcomes []Outcome // one per file
	Elapsed  time.Duration
	// Err is why the files could not be listed (the _metadata could not be read again); nothing
	// was verified then.
	Err error
}

// Verify stats every file of files through st, at most concurrency at a time (0:
// DefaultConcurrency), until ctx ends: files not reached by then are counted as not verified,
// and Verify returns without waiting for anything but the stats already running (which end
// with ctx).
func Verify(ctx context.Context, st Statter, files []File, concurrency int) *Result {
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	start := time.Now()
	res := &Result{Files: files, Outcomes: make([]Outcome, len(files))}
	var g errgroup.Group
	g.SetLimit(concurrency)
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		if files[i].URI == "" {
			res.Outcomes[i] = Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, Detail: files[i].Unverifiable, Checked: true}
			continue
		}
		g.Go(func() error {
			if ctx.Err() == nil {
				res.Outcomes[i] = check(ctx, st, &files[i])
			}
			return nil
		})
	}
	g.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// check stats one file and compares its size.
func check(ctx context.Context, st Statter, f *File) Outcome {
	attrs, err := st.StatFile(ctx, f.URI)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{} // not verified: the budget ran out
		}
		var se *source.Error
		switch {
		case errors.Is(err, source.ErrOutsideAllowlist):
			return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, Detail: "outside the allowlist", Checked: true}
		case errors.Is(err, source.ErrNotFound):
			return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING, Detail: "no such file", Checked: true}
		case errors.Is(err, source.ErrPermissionDenied):
			d := "permission denied"
			if errors.As(err, &se) && se.Msg != "" {
				d = se.Msg
			}
			if id := st.Identity(ctx, f.URI); id != "" {
				d += " for " + id
			}
			return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_PERMISSION_DENIED, Detail: d, Checked: true}
		case errors.Is(err, source.ErrInvalid):
			return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, Detail: publicMsg(err), Checked: true}
		}
		return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_UNAVAILABLE, Detail: publicMsg(err), Checked: true}
	}
	wrong := attrs.Size < f.MinSize || (f.Size >= 0 && !f.SizeConflict && attrs.Size != f.Size)
	if wrong {
		return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE, Actual: attrs.Size, Checked: true}
	}
	return Outcome{Actual: attrs.Size, Checked: true}
}

// publicMsg is a source error as a caller may see it.
func publicMsg(err error) string {
	var se *source.Error
	if errors.As(err, &se) {
		return se.Public()
	}
	return err.Error()
}
