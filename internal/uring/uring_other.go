//go:build !(linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le || s390x))

package uring

import "fmt"

// Reader is not available on this platform; NewReader always fails.
type Reader struct{}

// NewReader returns an error wrapping ErrUnsupported on this platform.
func NewReader(batch, bufSize int) (*Reader, error) {
	return nil, fmt.Errorf("uring: %w on this platform", ErrUnsupported)
}

// Batch is 0: no Reader exists here.
func (r *Reader) Batch() int { return 0 }

// Read is never called: no Reader exists here.
func (r *Reader) Read(names []string) ([]File, error) { return nil, ErrUnsupported }

// Close does nothing.
func (r *Reader) Close() error { return nil }
