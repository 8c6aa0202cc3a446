package classfile

import "fmt"

// FormatError reports a malformed class file: the byte offset where the problem was found, the
// field being read (a path such as "methods[3].Code.exception_table[1].handler_pc"), what is wrong
// and the value found. Every decoding failure of Parse and Decode is a *FormatError.
type FormatError struct {
	Off   int64  // byte offset in the class file (for Decode: in the code array)
	Field string // the field being read
	Msg   string // what is wrong
	Val   any    // the value found, nil if not meaningful
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("class file at byte %d", e.Off)
	if e.Field != "" {
		s += " (" + e.Field + ")"
	}
	s += ": " + e.Msg
	if e.Val != nil {
		s += fmt.Sprintf(" (found %v)", e.Val)
	}
	return s
}
