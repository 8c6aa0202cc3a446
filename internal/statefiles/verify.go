package statefiles

import (
	"context"
	"errors"
	"strings"
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
	// Skipped counts the file references past MaxFiles distinct files: not verified.
	Skipped int64
	// Err is why the files could not be listed (the _metadata could not be read again); nothing
	// was verified then.
	Err error
}

// Lister lists an object-store folder with the objects' sizes: *source.Opener.
type Lister interface {
	ListFolder(ctx context.Context, uri string, fn func(name string, size int64) bool) error
}

// listMin is how many referenced files of one object-store folder make listing the folder
// cheaper than asking for each (a listing page holds a thousand objects).
const listMin = 16

// Verify checks every file of files through st, at most concurrency requests at a time (0:
// DefaultConcurrency), until ctx ends: files not reached by then are counted as not verified,
// and Verify returns without waiting for anything but the requests already running (which end
// with ctx). Files are statted one by one, except that when st is also a Lister, an
// object-store folder holding listMin or more of them is listed instead (one request per
// thousand objects, the sizes included); one file of each listed folder is still statted, so
// that an identity that may list but not read is caught, and a folder that cannot be listed is
// statted file by file.
func Verify(ctx context.Context, st Statter, files []File, concurrency int) *Result {
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	start := time.Now()
	res := &Result{Files: files, Outcomes: make([]Outcome, len(files))}
	todo := make([]bool, len(files)) // still to stat
	var folders map[string][]int
	lister, canList := st.(Lister)
	for i := range files {
		switch {
		case files[i].URI == "":
			res.Outcomes[i] = Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, Detail: files[i].Unverifiable, Checked: true}
		case canList && isStore(files[i].URI):
			if folders == nil {
				folders = map[string][]int{}
			}
			dir := files[i].URI[:strings.LastIndex(files[i].URI, "/")+1]
			folders[dir] = append(folders[dir], i)
			todo[i] = true
		default:
			todo[i] = true
		}
	}
	var g errgroup.Group
	g.SetLimit(concurrency)
	for dir, idx := range folders {
		if len(idx) < listMin || ctx.Err() != nil {
			continue
		}
		g.Go(func() error {
			listFolder(ctx, st, lister, dir, idx, res, todo)
			return nil
		})
	}
	g.Wait()
	for i := range files {
		if ctx.Err() != nil {
			break
		}
		if !todo[i] {
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

// isStore reports whether uri names an object in a store (not a local file).
func isStore(uri string) bool {
	_, local := source.FilePath(uri)
	return !local
}

// listFolder judges the files idx of one folder from its listing, clearing their todo marks.
// The listing stops after twice the files plus a page more objects: a folder of many other
// objects (a job's shared/) is not read whole, and the files not seen by then are statted.
func listFolder(ctx context.Context, st Statter, l Lister, dir string, idx []int, res *Result, todo []bool) {
	want := make(map[string]int, len(idx))
	for _, i := range idx {
		want[res.Files[i].URI[len(dir):]] = i
	}
	sizes := make(map[string]int64, len(idx))
	limit, seen := 2*len(idx)+1000, 0
	complete := true
	err := l.ListFolder(ctx, dir, func(name string, size int64) bool {
		if seen++; seen > limit {
			complete = false
			return false
		}
		if _, ok := want[name]; ok {
			sizes[name] = size
		}
		return true
	})
	if err != nil || ctx.Err() != nil {
		return // every file of the folder is statted instead
	}
	// One read permission sample: a listing succeeds for an identity that may not read.
	for name := range sizes {
		if o := check(ctx, st, &res.Files[want[name]]); o.Kind == pb.FileProblemKind_FILE_PROBLEM_KIND_PERMISSION_DENIED || !o.Checked {
			return
		}
		break // one is enough: read permission is granted per bucket or prefix
	}
	for name, i := range want {
		f := &res.Files[i]
		size, found := sizes[name]
		switch {
		case found && size >= 0:
			res.Outcomes[i] = judge(f, size)
		case !found && complete:
			res.Outcomes[i] = Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING, Detail: "no such object", Checked: true}
		default:
			continue // statted
		}
		todo[i] = false
	}
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
			return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, Detail: errMsg(err), Checked: true}
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
			return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_CANNOT_VERIFY, Detail: errMsg(err), Checked: true}
		}
		return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_UNAVAILABLE, Detail: errMsg(err), Checked: true}
	}
	return judge(f, attrs.Size)
}

// judge compares the size found with the recorded one.
func judge(f *File, size int64) Outcome {
	if size < f.MinSize || (f.Size >= 0 && !f.SizeConflict && size != f.Size) {
		return Outcome{Kind: pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE, Actual: size, Checked: true}
	}
	return Outcome{Actual: size, Checked: true}
}

// errMsg is a source error's message alone ("outside the allowlist"), the same for every file
// it concerns, so that the findings group them.
func errMsg(err error) string {
	var se *source.Error
	if errors.As(err, &se) && se.Msg != "" {
		return se.Msg
	}
	return publicMsg(err)
}

// publicMsg is a source error as a caller may see it.
func publicMsg(err error) string {
	var se *source.Error
	if errors.As(err, &se) {
		return se.Public()
	}
	return err.Error()
}
