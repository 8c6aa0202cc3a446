package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// The documented exit codes.
const (
	exitAllow    = 0 // no finding at or above the fail level
	exitDeny     = 1 // findings at or above the fail level
	exitUsage    = 2 // usage or input error
	exitInternal = 3 // internal or remote failure
)

// usageError marks errors caused by the command line, reported with exit code 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCodeFor maps an error to the documented exit code and prints it on stderr.
func exitCodeFor(err error, stderr io.Writer) int {
	if errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(stderr, "preflight: deadline exceeded: the command did not finish within --timeout:", err)
	} else {
		fmt.Fprintln(stderr, "preflight:", err)
	}
	var ue usageError
	var fe *checkpoint.FormatError
	var pe *engine.PlanError
	var oe *engine.OptionsError
	var re *flinkrest.Error
	if errors.As(err, &re) {
		// Flink REST: an unknown job, no checkpoint or a refused token is the input's fault (2);
		// an unreachable endpoint is remote (3).
		if re.Kind == flinkrest.Unavailable {
			return exitInternal
		}
		return exitUsage
	}
	switch {
	// A decode stopped by the deadline or an interrupt is not the file's fault: checked first.
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, source.ErrUnavailable):
		return exitInternal
	case errors.As(err, &ue), errors.As(err, &fe), errors.As(err, &pe), errors.As(err, &oe), errors.Is(err, errInput):
		return exitUsage
	case errors.Is(err, source.ErrNotFound), errors.Is(err, source.ErrPermissionDenied),
		errors.Is(err, source.ErrInvalid), errors.Is(err, source.ErrTooLarge):
		return exitUsage
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.InvalidArgument, codes.NotFound, codes.PermissionDenied, codes.ResourceExhausted, codes.FailedPrecondition:
			return exitUsage
		}
	}
	return exitInternal
}

// errInput marks unreadable input files (missing path, permission) for exit code 2.
var errInput = errors.New("input error")

// verdictExitCode maps a verdict to the exit code.
func verdictExitCode(v pb.Verdict) int {
	if v == pb.Verdict_VERDICT_DENY {
		return exitDeny
	}
	return exitAllow
}
