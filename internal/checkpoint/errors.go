package checkpoint

import "fmt"

// FormatError reports malformed _metadata: where (byte offset and field path), what was found, and
// what is wrong. Every decoding failure is a *FormatError; callers inspect it with errors.As.
type FormatError struct {
	Offset int64  // byte offset in the file where the problem was detected
	Field  string // field path, e.g. operators[3].subtasks[2].managedOperatorState.states["x"].offsets
	Value  string // the value found, if meaningful ("" otherwise)
	Msg    string // what is wrong
	// Err is the underlying read error when the input could not be read (not malformed); nil
	// otherwise. errors.Is sees through it (e.g. context.Canceled from a cancelled reader).
	Err error
}

// Unwrap returns the underlying read error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

func (e *FormatError) Error() string {
	s := fmt.Sprintf("malformed _metadata at byte %d", e.Offset)
	if e.Field != "" {
		s += " (" + e.Field + ")"
	}
	s += ": " + e.Msg
	if e.Value != "" {
		s += " (found " + e.Value + ")"
	}
	return s
}
