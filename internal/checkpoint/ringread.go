package checkpoint

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync/atomic"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/uring"
)

// ReadLayoutFiles reads files in chunks: with io_uring (internal/uring), one system call opens,
// reads and closes a whole chunk, instead of four calls a file. A file the ring could not read
// whole, or whose bytes do not decode, is read again the usual way (loadFile): its Layout or
// error is then exactly what ReadLayoutFile gives, and a short read that was not the file's end
// (a FUSE file system may return one) cannot pass for the file.
const (
	ringChunk   = 8        // files a ring reads at once, and ReadLayoutFiles' chunk with a ring
	ringBufSize = 64 << 10 // a ring's buffer for one file: 512 KiB a Decoder in all
)

// ringUse is whether Decoders read through io_uring: ringUnknown until the first one tries.
// PREFLIGHT_IO_URING=off turns it off (to compare, or where a kernel misbehaves).
var ringUse atomic.Int32

const (
	ringUnknown = iota
	ringOn
	ringOff
)

func init() {
	if os.Getenv("PREFLIGHT_IO_URING") == "off" {
		ringUse.Store(ringOff)
	}
}

// fileRing returns the Decoder's io_uring reader, set up on first use, or nil where io_uring is
// not available (then no Decoder tries again) or failed for this Decoder.
func (x *Decoder) fileRing() *uring.Reader {
	if ringUse.Load() == ringOff {
		return nil // (a pooled Decoder may have a ring from before it was turned off)
	}
	if x.ring != nil || x.ringFailed {
		return x.ring
	}
	r, err := uring.NewReader(ringChunk, ringBufSize)
	if err != nil {
		x.ringFailed = true
		if errors.Is(err, uring.ErrUnsupported) {
			ringUse.Store(ringOff)
		}
		return nil
	}
	ringUse.CompareAndSwap(ringUnknown, ringOn)
	x.ring = r
	// A Decoder dropped by the pool (or by a caller) closes its ring: the ring holds a file
	// descriptor and mapped pages, which the collector does not see.
	runtime.AddCleanup(x, func(r *uring.Reader) { r.Close() }, r)
	return r
}

// chunkFor returns how many consecutive files a worker of ReadLayoutFiles takes at once: a
// ring's batch when x reads through one, small enough that every worker gets a few chunks; 1
// without a ring (a chunk only saves system calls), or for too few files to be worth one.
func chunkFor(x *Decoder, files, workers int) int {
	chunk := min(ringChunk, files/(4*workers))
	if chunk < 2 || x.fileRing() == nil {
		return 1
	}
	return chunk
}

// chunkRead is a chunk of consecutive files a Decoder has read with its ring and is decoding.
type chunkRead struct {
	names []string     // the chunk's
	first int          // the index of names[0] among ReadLayoutFiles' names
	files []uring.File // what the ring read; nil: every file is read the usual way
	next  int          // the next file of the chunk to decode
}

// readChunk reads the chunk of up to size files from names[first], with x's ring.
func (x *Decoder) readChunk(names []string, first, size int) chunkRead {
	c := chunkRead{names: names[first:min(first+size, len(names))], first: first}
	names = c.names
	if r := x.fileRing(); r != nil && len(names) > 1 {
		var err error
		if c.files, err = r.Read(names); err != nil {
			// The ring failed as a whole (it is unusable now): this Decoder reads as usual.
			x.ring.Close()
			x.ring, x.ringFailed, c.files = nil, true, nil
		}
	}
	return c
}

// pending reports whether files of c are left to decode (decode stopped at one admit refused).
func (c *chunkRead) pending() bool { return c.next < len(c.names) }

// read reports whether the ring read file j whole: a small file, whose Layout is small too.
func (c *chunkRead) read(j int) bool { return c.files != nil && c.files[j].Whole }

// decode decodes c's files from c.next on, file i into records(i), and calls put for each in
// order; each Layout and error is the one readLayoutFile gives. A file the ring did not read
// whole (one of ringBufSize bytes or more, or one that failed) is decoded only once admit(i)
// allows it, so that a chunk's large Layouts wait within the window they always had. decode
// returns false when admit refuses (c.next is that file) or put asks to stop.
func (x *Decoder) decode(ctx context.Context, stop *cancel.Flag, c *chunkRead, records func(i int) *layoutAlloc, admit func(i int) bool, put func(i int, l *Layout, err error) bool) bool {
	for ; c.next < len(c.names); c.next++ {
		j := c.next
		i := c.first + j
		if !c.read(j) && !admit(i) {
			return false
		}
		if testHookDecoding != nil {
			testHookDecoding(i, c.read(j))
		}
		rec := records(i)
		var l *Layout
		err := errNotRead
		if c.read(j) && ctx.Err() == nil {
			l, err = x.decodeLayout(c.files[j].Data, nil, stop, rec, true)
		}
		if err != nil {
			l, err = x.readLayoutFile(ctx, stop, c.names[j], rec)
		}
		if !put(i, l, err) {
			return false
		}
	}
	return true
}

// testHookDecoding, when set by a test, learns which file decode starts on and whether the
// ring read it whole.
var testHookDecoding func(i int, read bool)

// errNotRead marks a file decode has still to read the usual way.
var errNotRead = errors.New("not read")
