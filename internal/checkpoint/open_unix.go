//go:build unix

package checkpoint

import (
	"os"
	"syscall"
)

// openFile opens name for reading as a blocking descriptor that os does not register with its
// network poller: for a regular file os.Open's registration is one more failing system call per
// file, a noticeable share of decoding a small file.
func openFile(name string) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}
