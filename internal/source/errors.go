package source

import (
	"fmt"
	"time"
)

// Kind classifies why a source could not be read. The server maps each kind to one gRPC code.
type Kind int

// The kinds.
const (
	// Invalid: the URI cannot be parsed or uses an unknown scheme (INVALID_ARGUMENT).
	Invalid Kind = iota + 1
	// NotFound: nothing at the path, nor a _metadata under it (NOT_FOUND).
	NotFound
	// PermissionDenied: outside the allowlist, a disabled scheme, or refused by the store
	// (PERMISSION_DENIED).
	PermissionDenied
	// TooLarge: bigger than the configured limit (RESOURCE_EXHAUSTED).
	TooLarge
	// Unavailable: the store could not be reached; worth retrying after RetryAfter (UNAVAILABLE).
	Unavailable
)

func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case NotFound:
		return "not found"
	case PermissionDenied:
		return "permission denied"
	case TooLarge:
		return "too large"
	case Unavailable:
		return "unavailable"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Sentinels for errors.Is: errors.Is(err, source.ErrNotFound) holds for every *Error of that kind.
var (
	ErrInvalid          = &Error{Kind: Invalid}
	ErrNotFound         = &Error{Kind: NotFound}
	ErrPermissionDenied = &Error{Kind: PermissionDenied}
	ErrTooLarge         = &Error{Kind: TooLarge}
	ErrUnavailable      = &Error{Kind: Unavailable}
	// ErrOutsideAllowlist matches the PermissionDenied errors of the allowlist itself: a location
	// outside it, reached through a symlink leading out of it, or named with ".." (as opposed to
	// a store or file system that refused the read).
	ErrOutsideAllowlist = &Error{Kind: PermissionDenied, Msg: msgOutside}
)

// The messages of the allowlist's refusals.
const (
	msgOutside        = "outside the allowlist"
	msgSymlinkOutside = "resolves (through a symlink) outside the allowlist"
	msgDotDot         = `".." is not allowed`
)

// Error is every failure of Open and of reading an opened source.
type Error struct {
	Kind Kind
	// Path is what was looked for (after normalisation), e.g. s3://b/chk-5/_metadata. It is safe
	// to show to the caller: it is derived from the caller's own URI.
	Path string
	Msg  string
	// RetryAfter is a hint for Unavailable, within 0..MaxRetryAfter.
	RetryAfter time.Duration
	Err        error // the underlying cause, for logs; may be nil
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "source: " + e.withoutCause() + ": " + e.Err.Error()
	}
	return "source: " + e.withoutCause()
}

// Public is the message for the caller: Error without the package prefix and the underlying
// cause, which can name server-side details (files, credentials sources); the cause belongs in
// the server's log.
func (e *Error) Public() string {
	if e.Kind == Invalid && e.Err != nil {
		return e.withoutCause() + ": " + e.Err.Error() // about the caller's own URI
	}
	return e.withoutCause()
}

// withoutCause is the kind, path and message.
func (e *Error) withoutCause() string {
	s := e.Kind.String()
	if e.Path != "" {
		s += ": " + e.Path
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinels by kind.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalid, ErrNotFound, ErrPermissionDenied, ErrTooLarge, ErrUnavailable:
		return target.(*Error).Kind == e.Kind
	case ErrOutsideAllowlist:
		return e.Kind == PermissionDenied && (e.Msg == msgOutside || e.Msg == msgSymlinkOutside || e.Msg == msgDotDot)
	}
	return false
}

func newError(k Kind, path, msg string, err error) *Error {
	return &Error{Kind: k, Path: path, Msg: msg, Err: err}
}
