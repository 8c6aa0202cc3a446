package checkpoint

import (
	"errors"
	"io"
)

// Write encodes m.
func Write(w io.Writer, m *Metadata) error {
	return errors.New("checkpoint: writer not implemented yet")
}
