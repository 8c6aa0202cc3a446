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

	"golang.org/x/sync/errgroup"

	"github.com/flinkpreflight/preflight/internal/cancel"
)

// This file decodes many _metadata files in one process (inspect over a folder, a trend over
// retained checkpoints): most real files are a few KiB, where opening, reading and setting up a
// decoder cost as much as decoding, so a Decoder keeps its buffers from file to file.

// maxWholeFile is the largest file a Decoder reads whole into its reused buffer (one read call,
// then the zero-copy decoder); larger files stream through a 256 KiB buffer as ReadLayout does.
// It bounds a Decoder's memory at about maxWholeFile + 512 KiB (the streaming window and the
// key-group scratch) besides the Layouts it returns.
const maxWholeFile = 1 << 20

// Decoder reads Layouts of many files one after another, reusing its file buffer, field-path
// stack and state-name table, so the per-file cost is the open and read system calls plus the
// decoding itself. The Layouts it returns share no memory with the Decoder. A Decoder is not
// safe for concurrent use; ReadLayoutFiles takes one from a pool for each file.
type Decoder struct {
	whole  []byte // the current file, when it is at most maxWholeFile
	stream []byte // the streaming window, for larger files
	d      decoder
	lay    layoutState // d.lay: its scratch outlives each file
	props  propertiesMemo
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
// its own *CheckpointProperties.
func (pm *propertiesMemo) decode(b []byte) (*CheckpointProperties, string) {
	p, _, err := pm.decodeLen(b)
	if err != nil {
		return nil, err.Error()
	}
	if p == nil {
		return nil, ""
	}
	dst := *p
	return &dst, ""
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
// records (each state entry, subtask and operator) of any file, as ReadLayoutSized does.
func (x *Decoder) ReadLayoutFile(ctx context.Context, name string) (*Layout, error) {
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
	stop, release := cancel.Watch(ctx)
	defer release()
	var l *Layout
	if f == nil {
		l, err = x.readLayout(b, nil, stop)
	} else {
		defer f.Close()
		l, err = x.readLayout(nil, cancel.Reader(ctx, f), stop)
	}
	if cerr := ctx.Err(); err != nil && cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// readLayout resets the decoder for b (in memory) or r (streamed) and runs readLayout, checking
// stop (nil: never raised) between records.
//
// Bytes in memory are decoded without the field path, which only names the field of an error
// and costs a measurable share of decoding a small file (bench/README.md, "Lent Layouts"); a
// file that fails is decoded again with it, and fails at the same offset (decoding is
// deterministic), so its error is the one the path would have given.
func (x *Decoder) readLayout(b []byte, r io.Reader, stop *cancel.Flag) (*Layout, error) {
	if r != nil {
		return x.decodeLayout(b, r, stop, false)
	}
	l, err := x.decodeLayout(b, nil, stop, true)
	if err == nil {
		return l, nil
	}
	if fe := (*FormatError)(nil); errors.As(err, &fe) { // (its target escapes: only on failure)
		return x.decodeLayout(b, nil, stop, false)
	}
	return l, err
}

// decodeLayout is readLayout, skipping the field path when noPath is set.
func (x *Decoder) decodeLayout(b []byte, r io.Reader, stop *cancel.Flag, noPath bool) (l *Layout, err error) {
	d := &x.d
	*d = decoder{buf: b, r: r, limit: math.MaxInt64, runBudget: runBudget, path: d.path[:0], names: d.names, kgScratch: d.kgScratch, stop: stop, noPath: noPath, lay: &x.lay}
	x.lay = layoutState{props: &x.props, subScratch: keepScratch(x.lay.subScratch), handles: x.lay.handles}
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

// ReadLayoutFiles decodes the files at names with up to workers goroutines (GOMAXPROCS when
// workers < 1), each file with a Decoder's ReadLayoutFile, and calls fn for each file in the
// order of names, from the calling goroutine, with the Layout or the file's error. The Layout is
// fn's to keep. It stops at the first error fn returns (and returns it), or when ctx is done
// (returning ctx.Err()); no goroutine it started outlives the call.
//
// Memory is bounded by the worker count, not by the number of files: file i + workers starts
// only once fn is about to get file i, so at most workers + 1 decoded Layouts exist at once (up
// to workers being decoded or waiting for fn, and the one fn has), besides those fn keeps, plus
// the buffers of up to workers Decoders.
func ReadLayoutFiles(ctx context.Context, names []string, workers int, fn func(i int, l *Layout, err error) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(min(workers, len(names)), 1)
	ctx, stop := context.WithCancel(ctx)
	var g errgroup.Group
	g.SetLimit(workers)
	defer func() {
		stop() // the files being decoded stop at their next record
		g.Wait()
	}()
	type result struct {
		l   *Layout
		err error
	}
	// File i's result goes to slots[i%workers]: file i + workers is started only after file i's
	// result has been taken, so a slot holds at most one result and a worker never waits on it.
	slots := make([]chan result, workers)
	for k := range slots {
		slots[k] = make(chan result, 1)
	}
	start := func(i int) {
		g.Go(func() error {
			if testHookDecoding != nil {
				testHookDecoding(i)
			}
			x := decoders.Get().(*Decoder)
			defer decoders.Put(x)
			l, err := x.ReadLayoutFile(ctx, names[i])
			slots[i%workers] <- result{l, err}
			return nil
		})
	}
	for i := range min(workers, len(names)) {
		start(i)
	}
	for i := range names {
		r := <-slots[i%workers]
		if next := i + workers; next < len(names) {
			start(next) // decoded while fn has file i
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(i, r.l, r.err); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// testHookDecoding, when set by a test, learns which file a worker starts on.
var testHookDecoding func(i int)

// decoders keeps ReadLayoutFiles' Decoders (their file buffers, at most maxWholeFile each) from
// one file and one call to the next, as long as the collector lets them: a process that decodes
// folder after folder (a daemon, a trend over time) would otherwise grow them again for every file.
var decoders = sync.Pool{New: func() any { return NewDecoder() }}
