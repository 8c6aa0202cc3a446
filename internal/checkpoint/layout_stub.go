package checkpoint

import "io"

// ReadLayout is a placeholder until the streaming reader lands; the codec work replaces this file.
func ReadLayout(r io.Reader) (*Layout, error) {
	return nil, &FormatError{Msg: "reader not implemented yet"}
}
