// Package atomicfile writes a file so that a reader sees either the old file or the whole new
// one, never half of it, and a failed write leaves the old file in place.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write writes path through a temporary file in the same folder: write, chmod 0644, fsync,
// rename over path, fsync the folder (so the rename itself survives a crash). An existing file
// is replaced: callers that must not replace check first. The folder must exist.
func Write(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFile is Write of a byte slice.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
