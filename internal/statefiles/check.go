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
// DefaultBudget) and ctx. Listing honours ctx only: an error means nothing was verified.
func Check(ctx context.Context, o *source.Opener, uri string, budget time.Duration) (*Result, error) {
	obj, err := o.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return CheckReader(ctx, o, obj, obj.Size, obj.URI, budget)
}

// CheckReader is Check of a _metadata stream already open: metadataURI is where it was read
// ("" for an upload: relative files cannot be verified then).
func CheckReader(ctx context.Context, st Statter, r io.Reader, size int64, metadataURI string, budget time.Duration) (*Result, error) {
	start := time.Now()
	files, err := List(ctx, r, size, metadataURI)
	if err != nil {
		return nil, err
	}
	if budget <= 0 {
		budget = DefaultBudget
	}
	vctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	res := Verify(vctx, st, files, 0)
	res.Elapsed = time.Since(start)
	return res, nil
}
