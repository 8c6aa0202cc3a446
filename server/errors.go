package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// limitError is an upload or inline file over its limit.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// toStatus maps the errors of sources, the codec and the engine to gRPC statuses, once, here:
// handlers return plain errors. Admission's refusals (refusal.go) carry their status themselves
// (GRPCStatus, below), so they keep their type on every path, and the HTTP transports, which run
// the same handlers, map them to their own codes (refusalHTTPCode). ctx decides first, because a cancelled read surfaces from the
// decoder as a FormatError ("read error: context canceled").
func toStatus(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		err = cerr
	}
	var (
		se *source.Error
		fe *checkpoint.FormatError
		pe *engine.PlanError
		oe *engine.OptionsError
		le *limitError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.As(err, &le):
		return status.Error(codes.ResourceExhausted, le.msg)
	case errors.As(err, &se):
		return sourceStatus(se)
	case errors.As(err, &fe):
		return withDetail(codes.InvalidArgument, fe.Error(),
			&pb.MetadataFormatError{Offset: fe.Offset, Field: fe.Field, Value: fe.Value, Message: fe.Msg}).Err()
	case errors.As(err, &pe):
		// A BadRequest detail names the plan field, so a UI can point at it.
		return badField("plan."+pe.Field, pe.Error())
	case errors.As(err, &oe):
		return badField("options."+oe.Field, oe.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

// GRPCStatus maps a budget refusal to RESOURCE_EXHAUSTED.
func (e *BudgetError) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, e.Error())
}

// GRPCStatus maps a busy refusal to RESOURCE_EXHAUSTED with a RetryInfo detail.
func (e *BusyError) GRPCStatus() *status.Status {
	return withDetail(codes.ResourceExhausted, e.Error(), &errdetails.RetryInfo{RetryDelay: durationpb.New(e.RetryAfter)})
}

// withDetail is a status with one detail, or without it when the detail cannot be attached.
func withDetail(code codes.Code, msg string, detail protoadapt.MessageV1) *status.Status {
	st := status.New(code, msg)
	if d, err := st.WithDetails(detail); err == nil {
		st = d
	}
	return st
}

// badField is INVALID_ARGUMENT with a BadRequest detail naming the request field.
func badField(field, msg string) error {
	v := &errdetails.BadRequest_FieldViolation{Field: field, Description: msg}
	return withDetail(codes.InvalidArgument, msg, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{v}}).Err()
}

func sourceStatus(se *source.Error) error {
	code := codes.Internal
	switch se.Kind {
	case source.Invalid:
		code = codes.InvalidArgument
	case source.NotFound:
		code = codes.NotFound
	case source.PermissionDenied:
		code = codes.PermissionDenied
	case source.TooLarge:
		code = codes.ResourceExhausted
	case source.Unavailable:
		return withDetail(codes.Unavailable, se.Public(), &errdetails.RetryInfo{RetryDelay: durationpb.New(clampRetry(se.RetryAfter))}).Err()
	}
	// The caller sees the kind, its own path and the reason, never the underlying error (it can
	// name server-side files); the request log carries it.
	return status.Error(code, se.Public())
}

// clampRetry keeps every retry delay the server advises within 0..source.MaxRetryAfter.
func clampRetry(d time.Duration) time.Duration {
	return min(max(d, 0), source.MaxRetryAfter)
}

func errInvalid(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, fmt.Sprintf(format, args...))
}
