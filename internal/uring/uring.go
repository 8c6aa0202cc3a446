// Package uring opens, reads and closes batches of small files with one system call, through
// Linux's io_uring. Decoding a folder of checkpoint _metadata files of a few KiB each costs
// four system calls a file (open, fstat, read, close) besides the decoding; a Reader submits a
// whole batch of open → fadvise → read → close chains at once, which takes about a fifth off
// the time of reading such a folder.
//
// It is a fast path only: where io_uring is missing (another OS, an old kernel, a container's
// seccomp profile, kernel.io_uring_disabled), NewReader returns an error wrapping ErrUnsupported
// and callers read files as usual. A file the Reader could not read whole in one go (an error,
// an empty result, or one at least as large as the buffer) is reported as such, for the caller
// to read it the usual way, which gives the usual error messages.
package uring

import "errors"

// ErrUnsupported is wrapped by NewReader's error when io_uring cannot be used here.
var ErrUnsupported = errors.New("io_uring is not available")

// File is one file of a batch. Data is the file's bytes when Whole is set (a slice of the
// Reader's buffer, valid until its next Read); otherwise Err says why not (nil when the file
// filled the buffer and may be larger, or read empty). Whole means one read returned less than
// the buffer: the whole of a regular file on a local file system, but possibly a prefix on a
// file system that returns short reads (FUSE), or whatever a FIFO held. Callers that cannot
// tell from the content (a checkpoint decodes or not) read such files the usual way.
type File struct {
	Data  []byte
	Whole bool
	Err   error
}
