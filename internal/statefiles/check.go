package statefiles

import (
	"context"
	"io"
	"time"

	"github.com/flinkpreflight/preflight/internal/source"
)

// Budgets of the verification when the caller gives none: a check or decide, and the
// Kubernetes admission path (whose webhook answers within seconds).
const (
	DefaultBudget   = 10 * time.Second
	AdmissionBudget = 2 * time.Second
)

// Check opens the _metadata at uri through o (a file, a checkpoint folder or key prefix), lists
// the files it references and verifies them through o, the stats within budget (0:
// DefaultBudget, and at most half of what is left of ctx's deadline). Listing honours ctx only:
// an error means nothing was verified; the Result then carries it (Result.Err), for a report
// that says so instead of failing.
func Check(ctx context.Context, o *source.Opener, uri string, budget time.Duration) (*Result, error) {
	obj, err := o.Open(ctx, uri)
	if err != nil {
		return &Result{Err: err}, err
	}
	defer obj.Close()
	return CheckReader(ctx, o, obj, obj.Size, obj.URI, budget)
}

// CheckReader is Check of a _metadata stream already open: metadataURI is where it was read
// ("" for an upload: relative files cannot be verified then).
func CheckReader(ctx context.Context, st Statter, r io.Reader, size int64, metadataURI string, budget time.Duration) (*Result, error) {
	start := time.Now()
	files, skipped, err := list(ctx, r, size, metadataURI, MaxFiles)
	if err != nil {
		return &Result{Err: err, Elapsed: time.Since(start)}, err
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	// Half of what is left of the caller's deadline at most: the check must still answer.
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	vctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	res := Verify(vctx, st, files, 0)
	res.Skipped = skipped
	res.Elapsed = time.Since(start)
	return res, nil
}
