package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/uring"
)

// This file decodes many _metadata files in one process (inspect over a folder, a trend over
// retained checkpoints): most real files are a few KiB, where opening, reading and setting up a
// decoder cost as much as decoding, so a Decoder keeps its buffers from file to file.

// maxWholeFile is the largest file a Decoder reads whole into its reused buffer (one read call,
// then the zero-copy decoder); larger files stream through a 256 KiB buffer as ReadLayout does.
// It bounds a Decoder's memory at about maxWholeFile + 512 KiB (the streaming window and the
// key-group scratch) besides the Layouts it returns, plus 512 KiB for the chunks ReadLayoutFiles
// reads through io_uring (ringChunk × ringBufSize).
const maxWholeFile = 1 << 20

// Decoder reads Layouts of many files one after another, reusing its file buffer, field-path
// stack and state-name table, so the per-file cost is the open and read system calls plus the
// decoding itself. The Layouts it returns share no memory with the Decoder. A Decoder is not
// safe for concurrent use; ReadLayoutFiles runs one per worker.
type Decoder struct {
	whole  []byte // the current file, when it is at most maxWholeFile
	stream []byte // the streaming window, for larger files
	d      decoder
	props  propertiesMemo
	owned  layoutAlloc // the records of a Layout handed over to the caller

	ring       *uring.Reader // ReadLayoutFiles' chunk reader (ringread.go); nil until used
	ringFailed bool          // no ring for this Decoder: set up or a read failed
}

// propertiesMemo remembers the last few CheckpointProperties trailers decoded and their
// results: the checkpoints of one job repeat the same few hundred bytes, and decoding the Java
// serialization (once to check that the trailer is complete, once for Layout.Properties) costs
// more than the rest of a small file. A folder of several jobs' checkpoints interleaves a few
// distinct trailers, so one entry would miss on every change of job. A nil memo decodes every time.
type propertiesMemo struct {
	entries [memoTrailers]memoEntry
	next    int // the entry the next miss replaces (round robin)
}

type memoEntry struct {
	trailer []byte
	props   *CheckpointProperties
	n       int   // bytes the Java stream took (decodePropertiesLen)
	err     error // decodePropertiesLen's error
	valid   bool
}

const (
	// memoTrailers is how many distinct trailers a memo keeps (at most 32 KiB with maxMemoTrailer).
	memoTrailers = 8
	// maxMemoTrailer bounds the trailer a memo keeps (Flink's is about 400 bytes).
	maxMemoTrailer = 4 << 10
)

// decodeLen is decodePropertiesLen through the memo; the *CheckpointProperties is shared with
// the memo (decode hands out copies).
func (pm *propertiesMemo) decodeLen(b []byte) (*CheckpointProperties, int, error) {
	if pm != nil {
		for i := range pm.entries {
			if e := &pm.entries[i]; e.valid && bytes.Equal(e.trailer, b) {
				return e.props, e.n, e.err
			}
		}
	}
	p, n, err := decodePropertiesLen(b)
	if pm != nil && len(b) <= maxMemoTrailer {
		e := &pm.entries[pm.next]
		pm.next = (pm.next + 1) % memoTrailers
		e.trailer, e.props, e.n, e.err, e.valid = append(e.trailer[:0], b...), p, n, err, true
	}
	return p, n, err
}

// decode returns the Layout's Properties and PropertiesError for trailer b; each call returns
// its own *CheckpointProperties: dst, or a new one when dst is nil.
func (pm *propertiesMemo) decode(b []byte, dst *CheckpointProperties) (*CheckpointProperties, string) {
	p, _, err := pm.decodeLen(b)
	if err != nil {
		return nil, err.Error()
	}
	if p == nil {
		return nil, ""
	}
	if dst == nil {
		dst = new(CheckpointProperties)
	}
	*dst = *p
	return dst, ""
}

// growWhole returns buf resized to size bytes (size ≤ maxWholeFile), reallocated when its
// capacity is short: to twice the old capacity, at least 64 KiB, at most maxWholeFile.
func growWhole(buf []byte, size int64) []byte {
	if int64(cap(buf)) < size {
		buf = make([]byte, size, min(max(size, 2*int64(cap(buf)), 64<<10), maxWholeFile))
	}
	return buf[:size]
}

// NewDecoder returns an empty Decoder; its buffers grow with the first files.
func NewDecoder() *Decoder { return &Decoder{} }

// ReadLayoutFile decodes the Layout of the file at name. Errors name the path: the os error of
// the open or read, or the *FormatError (errors.As finds it) prefixed with the path. When ctx
// ends, the read stops with ctx's error: between reads of a large file, and between the decoded
// records (each state entry, subtask and operator) of any file, as ReadLayoutContext does.
func (x *Decoder) ReadLayoutFile(ctx context.Context, name string) (*Layout, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	return x.readLayoutFile(ctx, stop, name, nil)
}

// readLayoutFile is ReadLayoutFile with a watch of ctx that the caller keeps across files
// (ReadLayoutFiles: one per worker, not one per file), building the Layout in records: a
// recycling layoutAlloc for a Layout only lent to the caller, nil for one it owns.
func (x *Decoder) readLayoutFile(ctx context.Context, stop *cancel.Flag, name string, records *layoutAlloc) (*Layout, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, f, err := loadFile(name, x.whole)
	if b != nil {
		x.whole = b[:0]
	}
	if err != nil {
		return nil, err
	}
	var l *Layout
	if f == nil {
		l, err = x.readLayout(b, nil, stop, records)
	} else {
		defer f.Close()
		l, err = x.readLayout(nil, cancel.Reader(ctx, f), stop, records)
	}
	if cerr := ctx.Err(); err != nil && cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// ReadLayoutBytes is ReadLayoutBytes on the Decoder's reused decoding state.
func (x *Decoder) ReadLayoutBytes(b []byte) (*Layout, error) {
	return x.readLayout(b, nil, nil, nil)
}

// readLayout resets the decoder for b (in memory) or r (streamed) and runs readLayout, checking
// stop (nil: never raised) between records, building the Layout in records (nil: one the caller
// owns).
//
// Bytes in memory are decoded without the field path, which only names the field of an error
// and costs about a tenth of decoding a small file; a file that fails is decoded again with it,
// and fails at the same offset (decoding is deterministic), so its error is the one the path
// would have given.
func (x *Decoder) readLayout(b []byte, r io.Reader, stop *cancel.Flag, records *layoutAlloc) (*Layout, error) {
	if r != nil {
		return x.decodeLayout(b, r, stop, records, false)
	}
	l, err := x.decodeLayout(b, nil, stop, records, true)
	if err == nil {
		return l, nil
	}
	if fe := (*FormatError)(nil); errors.As(err, &fe) { // (its target escapes: only on failure)
		return x.decodeLayout(b, nil, stop, records, false)
	}
	return l, err
}

// decodeLayout is readLayout, skipping the field path when noPath is set.
func (x *Decoder) decodeLayout(b []byte, r io.Reader, stop *cancel.Flag, records *layoutAlloc, noPath bool) (l *Layout, err error) {
	if records == nil {
		records = &x.owned
	}
	records.reuse()
	d := &x.d
	var empty []SubtaskLayout // immutable, so Layouts lent one after another may share it
	if records.recycle && len(d.emptySubtasks) <= maxKeptSubtasks {
		empty = d.emptySubtasks
	}
	*d = decoder{buf: b, r: r, limit: math.MaxInt64, runBudget: runBudget, path: d.path[:0], names: d.names, props: &x.props, kgScratch: d.kgScratch, subScratch: keepScratch(d.subScratch), handles: d.handles, stop: stop, records: records, emptySubtasks: empty, noPath: noPath}
	if r != nil {
		if x.stream == nil {
			x.stream = make([]byte, 0, readBufSize)
		}
		d.buf = x.stream[:0]
	}
	defer func() { d.buf, d.r, d.stop = nil, nil, nil }()
	defer cancel.Recover(&err)
	return readLayoutKeep(d)
}

// keepScratch returns a Decoder's SubtaskState scratch for its next file, or nil when one
// operator with many subtasks made it large (the next file grows its own).
func keepScratch(s []SubtaskState) []SubtaskState {
	if cap(s) > maxKeptSubtasks {
		return nil
	}
	clear(s) // a file that failed part way leaves its records here
	return s[:0]
}

// maxKeptSubtasks bounds the SubtaskState scratch a Decoder keeps between files (about 160 KiB).
const maxKeptSubtasks = 1024

// ReadLayoutFiles decodes the files at names with workers Decoders in parallel (GOMAXPROCS when
// workers < 1) and calls fn for each file in the order of names, from the calling goroutine, with
// the Layout or the file's error. Each worker takes a chunk of consecutive files at a time (up
// to 8, read with one system call where io_uring is available: ringread.go). At most
// 2 × workers chunks of decoded Layouts wait for fn, and of those at most 2 × workers come from
// files of 64 KiB or more (ringBufSize; the rest are small files' Layouts), so memory is bounded
// by the workers' buffers and that window, not by the number of files. It stops at the first
// error fn returns (and returns it), or when ctx is done (returning ctx.Err()).
//
// The Layout is lent to fn: its records are reused for a later file once fn returns, so fn must
// not keep l or anything of it but its strings and values copied out (a Layout to keep comes from
// Decoder.ReadLayoutFile). Reusing them is what makes a folder of small files cheap: no
// allocation for records, nothing for the collector between files.
func ReadLayoutFiles(ctx context.Context, names []string, workers int, fn func(i int, l *Layout, err error) error) error {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(min(workers, len(names)), 1)
	x := pooledDecoder()
	defer decoders.Put(x)
	stop, release := cancel.Watch(ctx)
	defer release()
	chunk := chunkFor(x, len(names), workers)
	if workers == 1 {
		// One Decoder in the calling goroutine: no hand-offs between goroutines at all.
		lent := pooledAlloc()
		defer lentRecords.Put(lent)
		var stopped error
		give := func(i int, l *Layout, err error) bool {
			if stopped = ctx.Err(); stopped == nil {
				stopped = fn(i, l, err)
			}
			return stopped == nil
		}
		always := func(int) bool { return true }
		for first := 0; first < len(names) && stopped == nil; first += chunk {
			c := x.readChunk(names, first, chunk)
			x.decode(ctx, stop, &c, func(int) *layoutAlloc { return lent }, always, give)
		}
		if stopped != nil {
			return stopped
		}
		return ctx.Err()
	}
	window := 2 * workers // chunks
	span := window * chunk
	lent := make([]*layoutAlloc, span) // file i's records, reused by file i + span
	for k := range lent {
		lent[k] = pooledAlloc()
	}
	ctx, stopAll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { // no goroutine outlives the call, nor uses the records after it
		stopAll()
		wg.Wait()
		for _, a := range lent {
			lentRecords.Put(a)
		}
	}()

	type result struct {
		l   *Layout
		err error
	}
	// The calling goroutine is one of the workers: it decodes a chunk itself whenever the next
	// file in order is not ready, so workers goroutines share workers cores without a third one
	// that sleeps and wakes for every file (on a 2-core machine that hand-off was a tenth of a
	// small file's cost). A worker takes the next chunk from a counter once the window has room
	// (at most window chunks decoded or being decoded and not yet all given to fn), and puts file
	// i's result in slot i % span, which file i - span has left by then: per file, one buffered
	// channel operation on each side and no allocation.
	room := make(chan struct{}, window)
	slots := make([]chan result, span)
	for k := range slots {
		slots[k] = make(chan result, 1)
	}
	chunks := (len(names) + chunk - 1) / chunk
	var next atomic.Int64
	// claim reads the next chunk once the window has room, or returns false when every chunk is
	// taken (giving the room back).
	claim := func(x *Decoder) (chunkRead, bool) {
		c := int(next.Add(1) - 1)
		if c >= chunks {
			<-room
			return chunkRead{}, false
		}
		return x.readChunk(names, c*chunk, chunk), true
	}
	recordsOf := func(i int) *layoutAlloc { return lent[i%span] }
	put := func(i int, l *Layout, err error) bool {
		slots[i%span] <- result{l, err}
		return true
	}
	// Files the ring did not read whole may make large Layouts: file i of those is decoded only
	// once fn has had every file before i - 2 × workers, the window of Layouts ReadLayoutFiles
	// has without chunks, so chunks add only small Layouts to it. The lowest file held back is
	// always let through once fn reaches it, so this never deadlocks; the calling goroutine,
	// which is also the one giving files to fn, never waits here: it sets its chunk aside
	// (pending) and goes back to giving files to fn.
	var given atomic.Int64 // files given to fn
	inWindow := func(i int) bool { return i < int(given.Load())+2*workers }
	var mu sync.Mutex
	turn := sync.NewCond(&mu)
	var waiting atomic.Int32
	// ctx ends at the latest when the call returns (stopAll), and then wakes every waiter.
	context.AfterFunc(ctx, func() { mu.Lock(); turn.Broadcast(); mu.Unlock() })
	waitTurn := func(i int) bool {
		if inWindow(i) {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		waiting.Add(1)
		defer waiting.Add(-1)
		for !inWindow(i) && ctx.Err() == nil {
			turn.Wait()
		}
		return ctx.Err() == nil
	}
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := pooledDecoder()
			defer decoders.Put(x)
			stop, release := cancel.Watch(ctx)
			defer release()
			for {
				select {
				case room <- struct{}{}:
				case <-ctx.Done():
					return
				}
				c, ok := claim(x)
				if !ok || !x.decode(ctx, stop, &c, recordsOf, waitTurn, put) {
					return
				}
			}
		}()
	}
	var pending chunkRead // the calling goroutine's chunk, set aside until its next file is in the window
	for i := 0; i < len(names); {
		var r result
		select {
		case r = <-slots[i%span]:
		default:
			// The next file is not ready: decode here, the chunk set aside if its next file is
			// in the window, else a new chunk if the window has room; or else wait for it.
			decoded := false
			switch {
			case pending.pending():
				if inWindow(pending.first + pending.next) {
					x.decode(ctx, stop, &pending, recordsOf, inWindow, put)
					decoded = true
				}
			case int(next.Load()) < chunks:
				select {
				case room <- struct{}{}:
					if c, ok := claim(x); ok {
						pending = c
						x.decode(ctx, stop, &pending, recordsOf, inWindow, put)
						decoded = true
					}
				default:
				}
			}
			if decoded {
				continue
			}
			select {
			case r = <-slots[i%span]:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(i, r.l, r.err); err != nil {
			return err
		}
		i++
		given.Store(int64(i))
		if waiting.Load() > 0 {
			mu.Lock()
			turn.Broadcast()
			mu.Unlock()
		}
		if i%chunk == 0 || i == len(names) { // the chunk is all given to fn
			<-room
		}
	}
	return ctx.Err()
}

// decoders and lentRecords keep ReadLayoutFiles' Decoders (their file buffers) and the records of
// lent Layouts from one call to the next, as long as the collector lets them: a process that
// decodes folder after folder (a daemon, a trend over time) would otherwise grow them again on
// every call. Each is bounded (maxWholeFile, maxRecycledBytes).
var (
	decoders    = sync.Pool{New: func() any { return NewDecoder() }}
	lentRecords = sync.Pool{New: func() any { return newRecyclingAlloc() }}
)

func pooledDecoder() *Decoder { return decoders.Get().(*Decoder) }

func pooledAlloc() *layoutAlloc { return lentRecords.Get().(*layoutAlloc) }
