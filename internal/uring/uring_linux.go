//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le || s390x)

package uring

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The kernel ABI (include/uapi/linux/io_uring.h). The system call numbers are the same on
// every architecture this file builds for.
const (
	sysSetup    = 425
	sysEnter    = 426
	sysRegister = 427

	opOpenat  = 18
	opClose   = 19
	opRead    = 22
	opFadvise = 24

	sqeFixedFile = 1 << 0
	sqeLink      = 1 << 2 // the next SQE runs after this one, and is cancelled if this one fails
	sqeHardlink  = 1 << 3 // the next SQE runs after this one, whatever its result

	enterGetEvents   = 1 << 0
	registerFiles    = 2
	offSQRing        = 0
	offSQEs          = 0x10000000
	featSingleMmap   = 1 << 0
	featNoDrop       = 1 << 1
	setupSubmitAll   = 1 << 7 // Linux 5.18; it also guarantees opening into fixed slots (5.15)
	atFDCWD          = -100
	sqeSize, cqeSize = 64, 16
)

type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type setupParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sq                                                                     sqRingOffsets
	cq                                                                     cqRingOffsets
}

// sqe is struct io_uring_sqe, with the unions named as this package uses them.
type sqe struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off           uint64
	addr          uint64
	len           uint32
	opFlags       uint32 // open_flags, rw_flags
	userData      uint64
	bufIndex      uint16
	personality   uint16
	fileIndex     uint32 // 1 + the fixed-file slot, for openat and close
	addr3         uint64
	_             uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// Each file of a batch is one open → fadvise → read → close chain in fixed-file slot i (so the
// steps can name the file the open has not made yet); userData is i<<2 | the step. The fadvise
// (POSIX_FADV_NORMAL, which changes nothing here) fails on a FIFO, and its failure cancels the
// read, so a FIFO's data is neither taken from its writer nor passed off as a file.
const (
	stepOpen = iota
	stepFadvise
	stepRead
	stepClose
	steps
)

// stepNames names the steps in a File's error, as os.PathError's Op.
var stepNames = [steps]string{stepOpen: "open", stepFadvise: "fadvise", stepRead: "read", stepClose: "close"}

// openFlags: O_NONBLOCK so that a FIFO or a device never blocks the batch (a regular file
// ignores it); O_NOCTTY so that a terminal never becomes the controlling one. O_CLOEXEC does
// not apply: fixed slots are not in the descriptor table.
const openFlags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// Reader reads batches of up to Batch files through one io_uring instance. It is not safe for
// concurrent use. Its memory is Batch × the buffer size plus a few pages of rings. A FIFO's
// chain stops at the fadvise, before its close: it stays open in its slot until the next Read
// opens another file there, or Close.
type Reader struct {
	fd      int
	batch   int
	bufSize int
	ring    []byte // the SQ and CQ rings (one mapping)
	sqeMem  []byte
	sqTail  *uint32
	sqMask  uint32
	sqArray unsafe.Pointer
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    unsafe.Pointer

	buf     []byte         // batch × bufSize: slot i's file lands in buf[i*bufSize:]
	paths   []byte         // the batch's names, NUL-terminated
	results [][steps]int32 // file i's steps' results (a step's cqe.res)
	files   []File
	broken  error // set when the ring failed with requests in flight: never used again
}

// NewReader sets up an io_uring instance for batches of batch files of fewer than bufSize bytes
// each. Its error wraps ErrUnsupported when io_uring cannot be used (missing, too old (before
// Linux 5.18), or refused by seccomp or kernel.io_uring_disabled).
func NewReader(batch, bufSize int) (*Reader, error) {
	if batch < 1 || bufSize < 1 || bufSize > 1<<30 || batch > 1<<10 {
		return nil, fmt.Errorf("uring: batch %d or buffer size %d out of range", batch, bufSize)
	}
	var p setupParams
	p.flags = setupSubmitAll
	fd, _, errno := syscall.RawSyscall(sysSetup, uintptr(steps*batch), uintptr(unsafe.Pointer(&p)), 0)
	switch errno {
	case 0:
	case syscall.ENOSYS, syscall.EPERM, syscall.EACCES, syscall.EINVAL: // missing, refused, too old
		return nil, fmt.Errorf("uring: io_uring_setup: %w (%w)", ErrUnsupported, errno)
	default: // short of memory or descriptors: a later Reader may succeed
		return nil, fmt.Errorf("uring: io_uring_setup: %w", errno)
	}
	r := &Reader{fd: int(fd), batch: batch, bufSize: bufSize}
	if err := r.setUp(&p); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) setUp(p *setupParams) error {
	if p.features&featSingleMmap == 0 || p.features&featNoDrop == 0 || p.cqEntries < uint32(steps*r.batch) {
		return fmt.Errorf("uring: %w: kernel lacks single-mmap or no-drop rings", ErrUnsupported)
	}
	size := max(p.sq.array+p.sqEntries*4, p.cq.cqes+p.cqEntries*cqeSize)
	var err error
	if r.ring, err = syscall.Mmap(r.fd, offSQRing, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE); err != nil {
		return fmt.Errorf("uring: mapping the rings: %w", err)
	}
	if r.sqeMem, err = syscall.Mmap(r.fd, offSQEs, int(p.sqEntries*sqeSize), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE); err != nil {
		return fmt.Errorf("uring: mapping the submission entries: %w", err)
	}
	base := unsafe.Pointer(&r.ring[0])
	r.sqTail = (*uint32)(unsafe.Add(base, p.sq.tail))
	r.sqMask = *(*uint32)(unsafe.Add(base, p.sq.ringMask))
	r.sqArray = unsafe.Add(base, p.sq.array)
	r.cqHead = (*uint32)(unsafe.Add(base, p.cq.head))
	r.cqTail = (*uint32)(unsafe.Add(base, p.cq.tail))
	r.cqMask = *(*uint32)(unsafe.Add(base, p.cq.ringMask))
	r.cqes = unsafe.Add(base, p.cq.cqes)

	// A sparse table of batch fixed-file slots (-1: empty).
	slots := make([]int32, r.batch)
	for i := range slots {
		slots[i] = -1
	}
	if _, _, errno := syscall.RawSyscall6(sysRegister, uintptr(r.fd), registerFiles, uintptr(unsafe.Pointer(&slots[0])), uintptr(len(slots)), 0, 0); errno != 0 {
		return fmt.Errorf("uring: registering file slots: %w (%w)", ErrUnsupported, errno)
	}
	r.buf = make([]byte, r.batch*r.bufSize)
	r.results = make([][steps]int32, r.batch)
	r.files = make([]File, r.batch)
	return nil
}

// Batch is the most files one Read takes.
func (r *Reader) Batch() int { return r.batch }

// Read opens, reads (from offset 0, up to the buffer size) and closes the files at names
// (at most Batch), all submitted at once, and returns one File for each, in order; the slice
// and the Data in it are valid until the next Read. It returns an error only when the ring
// itself failed; the Reader is then unusable.
//
// The submission does not block: io_uring hands an open or read that would block (a name not
// in the directory cache, a page not in memory) to its kernel workers, and Read then waits for
// them like a blocking read.
func (r *Reader) Read(names []string) ([]File, error) {
	if r.broken != nil {
		return nil, r.broken
	}
	if len(names) > r.batch {
		return nil, fmt.Errorf("uring: %d files in a batch of %d", len(names), r.batch)
	}
	// The names first, so that the arena no longer moves when its addresses are taken.
	r.paths = r.paths[:0]
	for _, name := range names {
		r.paths = append(append(r.paths, name...), 0)
	}
	files := r.files[:len(names)]
	want, at := 0, 0
	for i, name := range names {
		files[i] = File{}
		r.results[i] = [steps]int32{}
		path := unsafe.Pointer(&r.paths[at])
		at += len(name) + 1
		if name == "" || strings.IndexByte(name, 0) >= 0 {
			files[i].Err = &os.PathError{Op: "open", Path: name, Err: syscall.EINVAL}
			continue
		}
		slot := uint32(i)
		r.push(sqe{opcode: opOpenat, flags: sqeHardlink, fd: atFDCWD, addr: uint64(uintptr(path)), opFlags: openFlags, fileIndex: slot + 1, userData: tag(i, stepOpen)})
		r.push(sqe{opcode: opFadvise, flags: sqeLink | sqeFixedFile, fd: int32(slot), userData: tag(i, stepFadvise)})
		r.push(sqe{opcode: opRead, flags: sqeHardlink | sqeFixedFile, fd: int32(slot), addr: uint64(uintptr(unsafe.Pointer(&r.buf[i*r.bufSize]))), len: uint32(r.bufSize), userData: tag(i, stepRead)})
		r.push(sqe{opcode: opClose, fileIndex: slot + 1, userData: tag(i, stepClose)})
		want += steps
	}
	if err := r.submitAndWait(want); err != nil {
		return nil, err
	}
	for i, name := range names {
		f, res := &files[i], &r.results[i]
		for step := stepOpen; step <= stepRead && f.Err == nil; step++ {
			// The first step that failed (a fadvise fails on a FIFO, cancelling its read).
			if res[step] < 0 {
				f.Err = &os.PathError{Op: stepNames[step], Path: name, Err: syscall.Errno(-res[step])}
			}
		}
		if n := int(res[stepRead]); f.Err == nil && n > 0 && n < r.bufSize {
			// Less than asked: the end of a regular file on a local file system (io_uring
			// itself reads on after a short read that did not block, until it gets 0). A file
			// system that returns short reads before the end (FUSE) can make this a prefix,
			// and a FIFO returns what it holds: see File.
			f.Data, f.Whole = r.buf[i*r.bufSize:i*r.bufSize+n], true
		}
	}
	return files, nil
}

// tag is an entry's userData: the file's place in the batch and the step.
func tag(i int, step uint64) uint64 { return uint64(i)<<2 | step }

// push writes one submission entry at the ring's tail. The ring has room: Read submits at most
// steps × batch entries and reaps all their completions before it returns.
func (r *Reader) push(e sqe) {
	tail := atomic.LoadUint32(r.sqTail)
	idx := tail & r.sqMask
	*(*sqe)(unsafe.Add(unsafe.Pointer(&r.sqeMem[0]), uintptr(idx)*sqeSize)) = e
	*(*uint32)(unsafe.Add(r.sqArray, uintptr(idx)*4)) = idx
	atomic.StoreUint32(r.sqTail, tail+1) // publishes the entry (a release store)
}

// submitAndWait submits the pushed entries and reaps want completions.
func (r *Reader) submitAndWait(want int) error {
	// Submitting runs every step that does not block, inline, and hands the others to kernel
	// workers, so this call is short and bounded: a raw system call keeps the scheduler from
	// handing this thread's P to another thread (a wake-up costlier than the call) meanwhile.
	toSubmit, got := want, 0
	for toSubmit > 0 {
		n, _, errno := syscall.RawSyscall6(sysEnter, uintptr(r.fd), uintptr(toSubmit), 0, 0, 0, 0)
		toSubmit -= int(n)
		switch {
		case errno == syscall.EINTR:
		case errno == 0 && n > 0:
		case (errno == syscall.EAGAIN || errno == syscall.EBUSY) && want-toSubmit > got:
			// Short of memory or of completion room, with requests in flight: reap, wait
			// for one more, then submit the rest.
			got += r.reap()
			if err := r.wait(1); err != nil {
				return err
			}
		default: // an error, or no progress and nothing in flight to wait for
			return r.fail(fmt.Errorf("uring: io_uring_enter submitted %d of %d: %w", want-toSubmit, want, errno))
		}
	}
	for got += r.reap(); got < want; got += r.reap() {
		// The steps left went to kernel workers and may block: an ordinary system call, so
		// that the scheduler runs other goroutines meanwhile.
		if err := r.wait(want - got); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) wait(n int) error {
	_, _, errno := syscall.Syscall6(sysEnter, uintptr(r.fd), 0, uintptr(n), enterGetEvents, 0, 0)
	switch errno {
	case 0, syscall.EINTR, syscall.EAGAIN, syscall.EBUSY:
		return nil
	}
	return r.fail(fmt.Errorf("uring: waiting for completions: %w", errno))
}

// reap records the completions in the ring and returns how many there were.
func (r *Reader) reap() int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail) // an acquire load: the entries before tail are written
	n := int(tail - head)
	for ; head != tail; head++ {
		c := (*cqe)(unsafe.Add(r.cqes, uintptr(head&r.cqMask)*cqeSize))
		i, step := c.userData>>2, c.userData&3
		if i >= uint64(r.batch) {
			continue
		}
		r.results[i][step] = c.res
	}
	atomic.StoreUint32(r.cqHead, head)
	return n
}

// abandoned keeps the buffers of Readers that failed with requests in flight: the kernel may
// still write into them, so they must never be freed or reused.
var abandoned struct {
	sync.Mutex
	readers []*Reader
}

func (r *Reader) fail(err error) error {
	r.broken = err
	abandoned.Lock()
	abandoned.readers = append(abandoned.readers, r)
	abandoned.Unlock()
	return err
}

// Close releases the ring. It is safe to call more than once.
func (r *Reader) Close() error {
	if r == nil || r.fd < 0 {
		return nil
	}
	var errs []error
	if r.sqeMem != nil {
		errs = append(errs, syscall.Munmap(r.sqeMem))
	}
	if r.ring != nil {
		errs = append(errs, syscall.Munmap(r.ring))
	}
	errs = append(errs, syscall.Close(r.fd))
	r.fd, r.ring, r.sqeMem = -1, nil, nil
	if r.broken == nil {
		r.broken = errors.New("uring: reader closed")
	}
	return errors.Join(errs...)
}
