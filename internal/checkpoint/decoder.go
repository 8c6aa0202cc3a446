package checkpoint

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flinkpreflight/preflight/internal/cancel"
)

// decoder reads big-endian primitives from a byte slice (no copy) or from an io.Reader through
// its own buffer, tracking the absolute byte offset, the field path (for errors) and the nesting
// depth. Failures abort decoding by panicking with a decodeError, recovered by the entry points
// (Read, ReadBytes, ReadLayout); nothing else panics.
type decoder struct {
	buf   []byte // window: the whole input, or the reader's buffer
	pos   int    // read position in buf
	base  int64  // absolute offset of buf[0]
	r     io.Reader
	rerr  error // sticky error of r (io.EOF at the end)
	limit int64 // absolute offset reads must not pass (master states, merged blobs)

	// lay is the layout mode's state (ReadLayout, Decoder, ReadFileRefs); nil in model mode
	// (Read, ReadBytes), which returns every record in the Metadata.
	lay *layoutState

	path []pathSeg
	// noPath skips the field path: a caller that can decode the same bytes again does so with
	// the path when decoding fails (Decoder.readLayout), so a good file does not pay for it.
	noPath bool
	depth  int

	runBudget  int64 // see runBudget
	trailerOff int64 // where the properties trailer (or the trailing bytes) start

	// names interns state names: every subtask's handle repeats them, and one string per name
	// saves memory and lets the simulator compare names by pointer.
	names map[string]string

	// sizeHint is the stream's expected length (0: unknown), for count's first allocation.
	sizeHint int64
	// stop, when set (ReadLayoutSized), is checked per state entry and per subtask record: the
	// conversion of a buffered record into its Layout (a million state names) reads nothing, so
	// the reader's context checks would not see its end.
	stop *cancel.Flag

	// kgScratch is where key-group offsets become sizes before they are compacted (see
	// keyGroupSizes); it grows to the largest handle, at most 32768 key groups.
	kgScratch []int64
}

// layoutState is what the decoder holds only when it builds a Layout: the Layout as its
// operators stream in, and the scratch their records are decoded into before each is mapped
// onto its OperatorLayout and dropped, so that the decoded model and the Layout are never both
// held for the whole file. In this mode offset arrays fold into summaries and inline bytes are
// skipped (see decoder.summarize). Kept apart from the reading state so that each mode's fields
// can be told apart; a Decoder keeps one from file to file for its scratch.
type layoutState struct {
	// out receives every operator record as soon as it is decoded; only its Operators are
	// filled (the rest of the Layout is mapped from meta at the end).
	out Layout
	// meta is the Metadata the rest of the Layout is built from (the model is returned only
	// outside layout mode).
	meta Metadata
	// onOperator, when set (ReadFileRefs), sees every decoded operator record before it is
	// mapped and dropped.
	onOperator func(*OperatorState)

	// emptySubtasks backs the Subtasks of operators whose records are all empty (see
	// shareEmptySubtasks); grown to the largest such parallelism.
	emptySubtasks []SubtaskLayout
	// props remembers the last properties trailers decoded (a Decoder's); nil decodes each one.
	props *propertiesMemo

	// subScratch holds an operator's SubtaskStates while it is converted: operatorLayout copies
	// what it needs before the next operator, so the records are reused instead of allocated
	// per subtask. Cleared after each operator.
	subScratch []SubtaskState
	// handles holds an operator's handle records (see handleScratch).
	handles handleScratch
}

// summarize reports layout mode: offset arrays fold into summaries and inline bytes are counted,
// not kept.
func (d *decoder) summarize() bool { return d.lay != nil }

// propsMemo is the layout mode's trailer memo; nil (decode each trailer) otherwise.
func (d *decoder) propsMemo() *propertiesMemo {
	if d.lay == nil {
		return nil
	}
	return d.lay.props
}

// maxInternedNames bounds the interning table, so a hostile file of unique names cannot grow it.
const maxInternedNames = 4096

// maxDepth caps the nesting of handles (changelog lists, key-group stream delegates).
const maxDepth = 64

// readBufSize is the reader's buffer; it holds any modified-UTF-8 string (2 + 65535 bytes).
const readBufSize = 256 << 10

type decodeError struct{ err *FormatError }

func newBytesDecoder(b []byte) *decoder {
	return &decoder{buf: b, limit: math.MaxInt64, runBudget: runBudget}
}

// bufPool recycles the readers' buffers.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, readBufSize); return &b }}

func newReaderDecoder(r io.Reader) *decoder {
	bp := bufPool.Get().(*[]byte)
	return &decoder{buf: (*bp)[:0], r: r, limit: math.MaxInt64, runBudget: runBudget}
}

// release returns a reader's buffer to the pool; d must not be used afterwards.
func (d *decoder) release() {
	if d.r != nil && cap(d.buf) == readBufSize {
		b := d.buf[:0]
		bufPool.Put(&b)
	}
	d.buf = nil
}

// pathSeg is one segment of a field path: name, name[idx] or name["key"].
type pathSeg struct {
	name   string
	idx    int
	key    string
	hasIdx bool
	hasKey bool
}

// The field path is kept only to name the field of an error; with noPath set, these do nothing
// (see Decoder.readLayout).
func (d *decoder) push(name string) {
	if !d.noPath {
		d.path = append(d.path, pathSeg{name: name})
	}
}

func (d *decoder) pushIdx(name string) {
	if !d.noPath {
		d.path = append(d.path, pathSeg{name: name, hasIdx: true})
	}
}

func (d *decoder) setIdx(i int) {
	if !d.noPath {
		d.path[len(d.path)-1].idx = i
	}
}

func (d *decoder) setKey(k string) {
	if !d.noPath {
		s := &d.path[len(d.path)-1]
		s.key, s.hasKey, s.hasIdx = k, true, false
	}
}

func (d *decoder) pop() {
	if !d.noPath {
		d.path = d.path[:len(d.path)-1]
	}
}

// rename replaces the name of the innermost segment (the next sibling field).
func (d *decoder) rename(name string) {
	if !d.noPath {
		d.path[len(d.path)-1].name = name
	}
}

// indexed switches the innermost segment between name and name[idx].
func (d *decoder) indexed(on bool) {
	if !d.noPath {
		s := &d.path[len(d.path)-1]
		s.hasIdx, s.hasKey = on, false
	}
}

func (d *decoder) renderPath() string {
	var sb strings.Builder
	for i, s := range d.path {
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(s.name)
		if s.hasKey {
			sb.WriteString("[" + strconv.Quote(s.key) + "]")
		} else if s.hasIdx {
			sb.WriteString("[" + strconv.Itoa(s.idx) + "]")
		}
	}
	return sb.String()
}

func (d *decoder) enter() {
	d.depth++
	if d.depth > maxDepth {
		d.failf(d.offset(), "", "handles nested deeper than %d", maxDepth)
	}
}

func (d *decoder) leave() { d.depth-- }

// offset returns the absolute offset of the next byte.
func (d *decoder) offset() int64 { return d.base + int64(d.pos) }

// fail aborts decoding with a FormatError at off.
func (d *decoder) fail(off int64, value, msg string) {
	panic(decodeError{&FormatError{Offset: off, Field: d.renderPath(), Value: value, Msg: msg}})
}

func (d *decoder) failf(off int64, value, format string, args ...any) {
	d.fail(off, value, sprintf(format, args...))
}

// recoverError converts a decoding abort into an error; other panics propagate.
func recoverError(errp *error) {
	if r := recover(); r != nil {
		de, ok := r.(decodeError)
		if !ok {
			panic(r)
		}
		*errp = de.err
	}
}

// fill makes at least n bytes available at pos (n ≤ readBufSize), reading from r; it reports
// whether it succeeded.
func (d *decoder) fill(n int) bool {
	if d.r == nil || d.rerr != nil {
		return len(d.buf)-d.pos >= n
	}
	if d.pos > 0 {
		k := copy(d.buf[:cap(d.buf)], d.buf[d.pos:])
		d.base += int64(d.pos)
		d.buf = d.buf[:k]
		d.pos = 0
	}
	empty := 0
	for len(d.buf) < n && d.rerr == nil {
		m, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+m]
		switch {
		case err != nil:
			d.rerr = err
		case m > 0:
			empty = 0
		default:
			// io.Reader allows empty reads; a reader that never progresses must not hang us.
			if empty++; empty >= 100 {
				d.rerr = io.ErrNoProgress
			}
		}
	}
	return len(d.buf) >= n
}

// truncated aborts with the "truncated" error for a read of n bytes.
func (d *decoder) truncated(n int) {
	off := d.offset()
	if off+int64(n) > d.limit {
		d.failf(off, "", "field needs %d bytes but only %d remain in the enclosing record", n, d.limit-off)
	}
	d.checkReadError()
	d.failf(off, "", "unexpected end of file (needed %d more bytes, %d remain)", n, len(d.buf)-d.pos)
}

// checkReadError aborts with the reader's error unless it is io.EOF.
func (d *decoder) checkReadError() {
	if d.rerr != nil && !errors.Is(d.rerr, io.EOF) {
		panic(decodeError{&FormatError{Offset: d.offset(), Field: d.renderPath(), Msg: "read error: " + d.rerr.Error(), Err: d.rerr}})
	}
}

// next returns the next n bytes (n ≤ readBufSize) and advances past them. The slice is valid
// until the next read.
func (d *decoder) next(n int) []byte {
	if len(d.buf)-d.pos < n || d.offset()+int64(n) > d.limit {
		if d.offset()+int64(n) > d.limit || !d.fill(n) {
			d.truncated(n)
		}
	}
	b := d.buf[d.pos : d.pos+n]
	d.pos += n
	return b
}

func (d *decoder) u8() uint8   { return d.next(1)[0] }
func (d *decoder) i32() int32  { return int32(binary.BigEndian.Uint32(d.next(4))) }
func (d *decoder) i64() int64  { return int64(binary.BigEndian.Uint64(d.next(8))) }
func (d *decoder) u16() uint16 { return binary.BigEndian.Uint16(d.next(2)) }

// remaining returns the bytes left before the limit or the end, or -1 when unknown (a reader
// without a limit).
func (d *decoder) remaining() int64 {
	if d.r == nil {
		rest := int64(len(d.buf)) - int64(d.pos)
		if l := d.limit - d.offset(); l < rest {
			return l
		}
		return rest
	}
	if d.limit != math.MaxInt64 {
		return d.limit - d.offset()
	}
	return -1
}

// count checks a count read at off against the bytes that remain: every element takes at least
// minSize bytes. It returns a safe capacity hint for the slice to be built.
func (d *decoder) count(n int32, off int64, minSize int64, what string) int {
	if n < 0 {
		d.failf(off, strconv.Itoa(int(n)), "negative %s count", what)
	}
	rem := d.remaining()
	if rem >= 0 {
		if int64(n)*minSize > rem {
			d.failf(off, strconv.Itoa(int(n)), "%s count needs at least %d bytes but only %d remain", what, int64(n)*minSize, rem)
		}
		return int(n)
	}
	// Unknown length: grow as elements arrive, from what the stream's expected size (when the
	// caller knows it) leaves room for, so that a million-operator file does not double its
	// largest arrays while decoding. The hint only sizes arrays: a stream longer or shorter than
	// it decodes the same.
	if hint := d.sizeHint - d.offset(); hint > 0 {
		return int(min(int64(n), max(1024, hint/minSize)))
	}
	return min(int(n), 1024)
}

// skip advances n bytes.
func (d *decoder) skip(n int64) {
	for n > 0 {
		avail := int64(len(d.buf) - d.pos)
		if avail == 0 {
			if d.offset() >= d.limit || !d.fill(1) {
				d.truncated(int(min(n, math.MaxInt32)))
			}
			continue
		}
		k := min(avail, n, d.limit-d.offset())
		if k <= 0 {
			d.truncated(int(min(n, math.MaxInt32)))
		}
		d.pos += int(k)
		n -= k
	}
}

// bytes reads n bytes into a new slice (n already checked against what remains, or growing).
// payload reads n bytes of state data, or only skips them when summarizing: the Layout counts
// state bytes but keeps none.
func (d *decoder) payload(n int64) []byte {
	if d.summarize() {
		d.skip(n)
		return nil
	}
	return d.bytes(n)
}

func (d *decoder) bytes(n int64) []byte {
	if d.r == nil {
		return append([]byte{}, d.next(int(n))...)
	}
	var out []byte
	for n > 0 {
		k := int(min(n, readBufSize))
		out = append(out, d.next(k)...)
		n -= int64(k)
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

// i64s reads n big-endian i64 values; when keep is false it folds them into s only.
func (d *decoder) i64s(n int, keep bool, s *offsetSummary) []int64 {
	var out []int64
	if keep {
		out = make([]int64, 0, min(n, max(int(d.remaining()/8), 0)+1, 1<<20))
	}
	return d.appendI64s(out, n, keep, s)
}

// appendI64s reads n big-endian i64 values, appending them to out when keep is set and folding
// them into s when s is not nil. It converts whole buffered windows at a time (no per-element
// call or bounds check); a value split across the window's end, the limit or the end of input
// goes through next, so truncation errors name the offset of the first missing value.
func (d *decoder) appendI64s(out []int64, n int, keep bool, s *offsetSummary) []int64 {
	for n > 0 {
		k := d.i64Window(n)
		b := d.buf[d.pos : d.pos+8*k]
		if s != nil {
			s.add(b)
		}
		if keep {
			out = slices.Grow(out, k)
			out = decodeI64s(out, b)
		}
		d.pos += 8 * k
		n -= k
	}
	return out
}

// i64Window returns how many whole i64 values, at most n (> 0), are buffered at d.pos before the
// limit: at least one, since when none is it reads one through next, which fills the buffer or
// fails naming the offset of the missing value.
func (d *decoder) i64Window(n int) int {
	for {
		avail := len(d.buf) - d.pos
		if l := d.limit - d.offset(); int64(avail) > l {
			avail = int(l)
		}
		if avail >= 8 {
			return min(n, avail/8)
		}
		d.next(8) // fills or fails
		d.pos -= 8
	}
}

// decodeI64s appends the big-endian i64 values of b (len(b) a multiple of 8) to out, which has
// room for them.
func decodeI64s(out []int64, b []byte) []int64 {
	k := len(b) / 8
	dst := out[len(out) : len(out)+k]
	// Shaped so the compiler drops the bounds checks: one load and byte swap per value.
	for i := range dst {
		if len(b) < 8 {
			break
		}
		dst[i] = int64(binary.BigEndian.Uint64(b[:8]))
		b = b[8:]
	}
	return out[:len(out)+k]
}

// utf reads a modified-UTF-8 string (Java DataInput.readUTF).
// stateName reads a state name, interned.
func (d *decoder) stateName() string {
	off := d.offset()
	n := int(d.u16())
	b := d.next(n)
	if s, ok := d.names[string(b)]; ok {
		return s
	}
	s, err := decodeMUTF8(b)
	if err != nil {
		d.fail(off+2+int64(err.(*mutf8Error).pos), "", err.Error())
	}
	if d.names == nil {
		d.names = make(map[string]string)
	}
	if len(d.names) < maxInternedNames {
		key := s // the key is the encoded bytes, which are s itself when plain ASCII
		if !isPlainASCII(b) {
			key = string(b)
		}
		d.names[key] = s
	}
	return s
}

func (d *decoder) utf() string {
	off := d.offset()
	n := int(d.u16())
	b := d.next(n)
	s, err := decodeMUTF8(b)
	if err != nil {
		d.fail(off+2+int64(err.(*mutf8Error).pos), "", err.Error())
	}
	return s
}
