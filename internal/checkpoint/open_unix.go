//go:build unix

package checkpoint

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// loadFile reads the regular file name into buf (grown up to maxWholeFile) and returns its
// bytes, or, for a larger file, returns it open for streaming. A small file costs four system
// calls (open, fstat, read, close) and no *os.File: for the KiB-sized files of a checkpoint
// corpus, os.Open's poller registration, finalizer and the read that confirms EOF are a
// noticeable share of decoding. O_NONBLOCK keeps a FIFO or a device from blocking the open (a
// regular file ignores it); they fail the regular-file check.
func loadFile(name string, buf []byte) (data []byte, f *os.File, err error) {
	fd, err := retryEINTR(func() (int, error) {
		return syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	})
	if err != nil {
		return buf, nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	var st syscall.Stat_t
	if _, err := retryEINTR(func() (int, error) { return 0, syscall.Fstat(fd, &st) }); err != nil {
		syscall.Close(fd)
		return buf, nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return buf, nil, fmt.Errorf("%s: not a regular file", name)
	}
	size := st.Size
	if size > maxWholeFile {
		syscall.SetNonblock(fd, false) // a plain blocking *os.File, as os.Open gives
		return buf, os.NewFile(uintptr(fd), name), nil
	}
	defer syscall.Close(fd)
	b := growWhole(buf, size)
	// The size is known, so one read call in the usual case. A file that shrank since fstat
	// fails; one that grew is decoded as it was at fstat.
	for n := 0; n < len(b); {
		k, err := retryEINTR(func() (int, error) { return syscall.Read(fd, b[n:]) })
		switch {
		case err != nil:
			return b, nil, &os.PathError{Op: "read", Path: name, Err: err}
		case k == 0:
			return b, nil, fmt.Errorf("%s: read: %w", name, io.ErrUnexpectedEOF)
		}
		n += k
	}
	return b, nil, nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}
