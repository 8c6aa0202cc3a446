//go:build !unix

package checkpoint

import (
	"fmt"
	"io"
	"os"
)

// loadFile reads the regular file name into buf (grown up to maxWholeFile) and returns its
// bytes, or, for a larger file, returns it open for streaming.
func loadFile(name string, buf []byte) (data []byte, f *os.File, err error) {
	f, err = os.Open(name)
	if err != nil {
		return buf, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return buf, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return buf, nil, fmt.Errorf("%s: not a regular file", name)
	}
	if fi.Size() > maxWholeFile {
		return buf, f, nil
	}
	defer f.Close()
	b := growWhole(buf, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return b, nil, fmt.Errorf("%s: read: %w", name, err)
	}
	return b, nil, nil
}
