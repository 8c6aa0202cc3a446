// Package jarindex indexes Java archives without extracting them: it reads the zip central
// directory over an io.ReaderAt (zip64 included), names every class with its size and a content
// hash, reads the class file version from the first bytes of a class, and parses constant pools on
// demand to see which classes a class references. Flink Preflight's classpath check builds on it.
//
// It is written for hostile input: every count and offset in the archive is checked against the
// file's size and the configured Limits before anything is allocated, inflation is bounded by the
// entry's declared size (an entry that inflates past it is a zip bomb and an error), names that
// would escape an extraction folder are refused, and long loops honour the caller's context.
//
// Content hash: a class's hash is its CRC-32 from the central directory together with its
// uncompressed size. That costs no I/O and, unlike a hash of the compressed bytes, does not
// change with the compression level the build tool used; two different classes of the same size
// collide with probability 2^-32, which is fine for saying "these copies differ". Entries read
// whole (constant pools, manifests, pom.properties) are checked against that CRC and their declared
// size; a class version is read from the first 8 bytes alone, with a bounded inflater.
package jarindex

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// Limits bound what an archive may make the indexer do. Zero values take the defaults.
type Limits struct {
	// MaxEntries is the most entries an archive may declare (default 500,000; a 300 MB uber jar
	// has about 100,000).
	MaxEntries int
	// MaxNameBytes bounds one entry name (default 4096).
	MaxNameBytes int
	// MaxEntryBytes bounds the declared uncompressed size of an entry that is inflated
	// (default 64 MiB: class files and manifests are far smaller).
	MaxEntryBytes int64
	// MaxRatio is the largest uncompressed/compressed ratio accepted for an inflated entry
	// (default 1100: DEFLATE cannot exceed about 1032:1, so anything above is a lie or a bomb).
	MaxRatio int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = 500_000
	}
	if l.MaxNameBytes <= 0 {
		l.MaxNameBytes = 4096
	}
	if l.MaxEntryBytes <= 0 {
		l.MaxEntryBytes = 64 << 20
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = 1100
	}
	return l
}

// Error is every failure to read an archive: the archive, the byte offset and what is wrong.
type Error struct {
	Archive string
	Offset  int64 // -1 when not about one place
	Entry   string
	Msg     string
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("jar ")
	b.WriteString(e.Archive)
	if e.Entry != "" {
		fmt.Fprintf(&b, ": entry %q", e.Entry)
	}
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " at byte %d", e.Offset)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrLimit is wrapped by errors caused by a limit (entry count, bomb ratio, sizes), so that
// callers can answer RESOURCE_EXHAUSTED rather than INVALID_ARGUMENT.
var ErrLimit = errors.New("over a limit")

// Entry is one central-directory record.
type Entry struct {
	Name             string
	Method           uint16 // 0 stored, 8 deflated
	Flags            uint16
	CRC32            uint32
	CompressedSize   int64
	UncompressedSize int64
	HeaderOffset     int64 // of the local file header
}

// IsDir reports a folder entry.
func (e *Entry) IsDir() bool { return strings.HasSuffix(e.Name, "/") }

const (
	eocdSig       = 0x06054b50
	eocd64Sig     = 0x06064b50
	eocd64LocSig  = 0x07064b50
	centralSig    = 0x02014b50
	localSig      = 0x04034b50
	eocdLen       = 22
	centralLen    = 46
	localLen      = 30
	maxCommentLen = 0xFFFF
)

// Archive is an opened zip: its central directory, read and checked.
type Archive struct {
	Name    string
	Size    int64
	Entries []Entry
	r       io.ReaderAt
	lim     Limits
	op      entryOpener // Open's state: Open is not safe for concurrent use
	buf     []byte
}

// entryOpener holds one inflater and its buffers, reused from entry to entry. Each goroutine
// reading entries at the same time needs its own.
type entryOpener struct {
	a   *Archive
	fr  io.ReadCloser
	src byteSource
	er  entryReader
	cp  *cpParser
}

func (a *Archive) errf(off int64, entry, format string, args ...any) *Error {
	return &Error{Archive: a.Name, Offset: off, Entry: entry, Msg: fmt.Sprintf(format, args...)}
}

func (a *Archive) limitf(off int64, entry, format string, args ...any) *Error {
	e := a.errf(off, entry, format, args...)
	e.Err = ErrLimit
	return e
}

// OpenArchive reads and checks the central directory of the zip in r (size bytes). name labels
// errors. check, when non-nil, is called every 4096 entries; an error from it stops the read
// (pass ctx.Err).
func OpenArchive(r io.ReaderAt, size int64, name string, lim Limits, check func() error) (*Archive, error) {
	a := &Archive{Name: name, Size: size, r: r, lim: lim.withDefaults()}
	a.op.a = a
	if size < eocdLen {
		return nil, a.errf(-1, "", "%d bytes is too short for a zip file (no end of central directory record)", size)
	}
	// The EOCD record is in the last 22+65535 bytes.
	tail := int64(eocdLen + maxCommentLen)
	if tail > size {
		tail = size
	}
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return nil, &Error{Archive: name, Offset: size - tail, Msg: "cannot read the end of the file", Err: err}
	}
	pos := -1
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == eocdSig {
			// The comment must end exactly at the end of the file.
			if i+eocdLen+int(binary.LittleEndian.Uint16(buf[i+20:])) == len(buf) {
				pos = i
				break
			}
		}
	}
	if pos < 0 {
		return nil, a.errf(-1, "", "not a zip file: no end of central directory record in the last %d bytes", tail)
	}
	eocdOff := size - tail + int64(pos)
	e := buf[pos:]
	disk, cdDisk := binary.LittleEndian.Uint16(e[4:]), binary.LittleEndian.Uint16(e[6:])
	count := uint64(binary.LittleEndian.Uint16(e[10:]))
	cdSize := uint64(binary.LittleEndian.Uint32(e[12:]))
	cdOff := uint64(binary.LittleEndian.Uint32(e[16:]))
	endOfCD := eocdOff
	if count == 0xFFFF || cdSize == 0xFFFFFFFF || cdOff == 0xFFFFFFFF {
		// zip64: the locator sits just before the EOCD record.
		locOff := eocdOff - 20
		if locOff < 0 {
			return nil, a.errf(eocdOff, "", "zip64 values without a zip64 locator")
		}
		loc := make([]byte, 20)
		if _, err := r.ReadAt(loc, locOff); err != nil {
			return nil, &Error{Archive: name, Offset: locOff, Msg: "cannot read the zip64 locator", Err: err}
		}
		if binary.LittleEndian.Uint32(loc) != eocd64LocSig {
			return nil, a.errf(locOff, "", "zip64 values but no zip64 end of central directory locator")
		}
		rec64 := int64(binary.LittleEndian.Uint64(loc[8:]))
		if rec64 < 0 || rec64+56 > locOff {
			return nil, a.errf(locOff, "", "zip64 end of central directory offset %d is outside the file", rec64)
		}
		r64 := make([]byte, 56)
		if _, err := r.ReadAt(r64, rec64); err != nil {
			return nil, &Error{Archive: name, Offset: rec64, Msg: "cannot read the zip64 end of central directory", Err: err}
		}
		if binary.LittleEndian.Uint32(r64) != eocd64Sig {
			return nil, a.errf(rec64, "", "bad zip64 end of central directory signature")
		}
		disk, cdDisk = uint16(binary.LittleEndian.Uint32(r64[16:])), uint16(binary.LittleEndian.Uint32(r64[20:]))
		count = binary.LittleEndian.Uint64(r64[32:])
		cdSize = binary.LittleEndian.Uint64(r64[40:])
		cdOff = binary.LittleEndian.Uint64(r64[48:])
		endOfCD = rec64
	}
	if disk != 0 || cdDisk != 0 {
		return nil, a.errf(eocdOff, "", "multi-volume zip archives are not supported")
	}
	if count > uint64(a.lim.MaxEntries) {
		return nil, a.limitf(eocdOff, "", "declares %d entries; the limit is %d", count, a.lim.MaxEntries)
	}
	if cdOff > uint64(endOfCD) || cdSize > uint64(endOfCD)-cdOff {
		return nil, a.errf(eocdOff, "", "central directory (offset %d, %d bytes) does not fit before its end record at %d", cdOff, cdSize, endOfCD)
	}
	if count*centralLen > cdSize {
		return nil, a.errf(eocdOff, "", "declares %d entries but its central directory of %d bytes holds at most %d", count, cdSize, cdSize/centralLen)
	}
	// Prepended data (self-extracting archives, shell stubs) shifts every offset; Java accepts it.
	base := int64(endOfCD) - int64(cdSize) - int64(cdOff)
	if endOfCD != eocdOff {
		base = 0 // zip64 offsets are absolute in practice
	}
	a.Entries = make([]Entry, 0, count)
	br := bufio.NewReaderSize(io.NewSectionReader(r, int64(cdOff)+base, int64(cdSize)), 64<<10)
	hdr := make([]byte, centralLen)
	off := int64(cdOff) + base
	names := newInterner()
	for i := uint64(0); i < count; i++ {
		if check != nil && i%4096 == 0 {
			if err := check(); err != nil {
				return nil, err
			}
		}
		if _, err := io.ReadFull(br, hdr); err != nil {
			return nil, &Error{Archive: name, Offset: off, Msg: fmt.Sprintf("central directory ends after %d of %d entries", i, count), Err: err}
		}
		if binary.LittleEndian.Uint32(hdr) != centralSig {
			return nil, a.errf(off, "", "entry %d: bad central directory signature 0x%08x", i, binary.LittleEndian.Uint32(hdr))
		}
		var ent Entry
		ent.Flags = binary.LittleEndian.Uint16(hdr[8:])
		ent.Method = binary.LittleEndian.Uint16(hdr[10:])
		ent.CRC32 = binary.LittleEndian.Uint32(hdr[16:])
		csize := uint64(binary.LittleEndian.Uint32(hdr[20:]))
		usize := uint64(binary.LittleEndian.Uint32(hdr[24:]))
		nameLen := int(binary.LittleEndian.Uint16(hdr[28:]))
		extraLen := int(binary.LittleEndian.Uint16(hdr[30:]))
		commentLen := int(binary.LittleEndian.Uint16(hdr[32:]))
		hoff := uint64(binary.LittleEndian.Uint32(hdr[42:]))
		if nameLen > a.lim.MaxNameBytes {
			return nil, a.limitf(off, "", "entry %d: name of %d bytes; the limit is %d", i, nameLen, a.lim.MaxNameBytes)
		}
		varLen := nameLen + extraLen + commentLen
		if int64(varLen) > int64(cdSize) {
			return nil, a.errf(off, "", "entry %d: name, extra and comment (%d bytes) overrun the central directory", i, varLen)
		}
		if cap(a.buf) < varLen {
			a.buf = make([]byte, varLen)
		}
		v := a.buf[:varLen]
		if _, err := io.ReadFull(br, v); err != nil {
			return nil, &Error{Archive: name, Offset: off, Msg: fmt.Sprintf("entry %d: truncated name or extra field", i), Err: err}
		}
		nameBytes := v[:nameLen]
		extra := v[nameLen : nameLen+extraLen]
		if csize == 0xFFFFFFFF || usize == 0xFFFFFFFF || hoff == 0xFFFFFFFF {
			// zip64 extended information: the fields present are exactly those saturated above.
			for len(extra) >= 4 {
				tag, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
				if 4+n > len(extra) {
					break
				}
				if tag == 0x0001 {
					f := extra[4 : 4+n]
					next := func() (uint64, bool) {
						if len(f) < 8 {
							return 0, false
						}
						x := binary.LittleEndian.Uint64(f)
						f = f[8:]
						return x, true
					}
					ok := true
					if usize == 0xFFFFFFFF {
						usize, ok = next()
					}
					if ok && csize == 0xFFFFFFFF {
						csize, ok = next()
					}
					if ok && hoff == 0xFFFFFFFF {
						hoff, ok = next()
					}
					if !ok {
						return nil, a.errf(off, string(nameBytes), "zip64 extra field too short")
					}
				}
				extra = extra[4+n:]
			}
		}
		ent.Name = names.intern(nameBytes)
		if msg := unsafeName(ent.Name); msg != "" {
			return nil, a.errf(off, ent.Name, "unsafe entry name (%s); a zip-slip archive is refused", msg)
		}
		if hoff >= uint64(size) || csize > uint64(size) || int64(hoff)+base+int64(csize) > size || usize > 1<<62 {
			return nil, a.errf(off, ent.Name, "data (offset %d, %d bytes) lies outside the %d-byte file", hoff, csize, size)
		}
		ent.CompressedSize, ent.UncompressedSize, ent.HeaderOffset = int64(csize), int64(usize), int64(hoff)+base
		a.Entries = append(a.Entries, ent)
		off += int64(centralLen + varLen)
	}
	a.buf = nil
	return a, nil
}

// unsafeName says why a name would escape an extraction folder, or "".
func unsafeName(n string) string {
	switch {
	case n == "":
		return "empty"
	case strings.ContainsRune(n, 0):
		return "contains NUL"
	case strings.HasPrefix(n, "/"), strings.HasPrefix(n, `\`):
		return "absolute path"
	case len(n) >= 2 && n[1] == ':':
		return "drive letter"
	case strings.Contains(n, `\`):
		return "backslash separator"
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." {
			return `".." segment`
		}
	}
	return ""
}

// interner shares name strings' backing arrays in one slab, so 100k names cost one allocation
// per 64 KiB rather than one each.
type interner struct{ slab []byte }

func newInterner() *interner { return &interner{} }

func (in *interner) intern(b []byte) string {
	if len(b) > 1024 {
		return string(b)
	}
	if cap(in.slab)-len(in.slab) < len(b) {
		in.slab = make([]byte, 0, 64<<10)
	}
	start := len(in.slab)
	in.slab = append(in.slab, b...)
	return unsafeString(in.slab[start:len(in.slab):len(in.slab)])
}

// localPrefetch is how much Open reads at an entry's local header in one call: the header, its
// name and extra field, and usually enough compressed data for a class header.
const localPrefetch = 1024

// openData reads the local header of e (with the first data bytes in the same read) and points
// o.src at the entry's compressed data.
func (o *entryOpener) openData(e *Entry) error {
	a := o.a
	n := int64(localPrefetch)
	if rest := a.Size - e.HeaderOffset; rest < n {
		n = rest
	}
	if n < localLen {
		return a.errf(e.HeaderOffset, e.Name, "local header runs past the end of the file")
	}
	buf := o.src.head[:n]
	if _, err := a.r.ReadAt(buf, e.HeaderOffset); err != nil && err != io.EOF {
		return &Error{Archive: a.Name, Offset: e.HeaderOffset, Entry: e.Name, Msg: "cannot read the local header", Err: err}
	}
	if binary.LittleEndian.Uint32(buf) != localSig {
		return a.errf(e.HeaderOffset, e.Name, "bad local header signature")
	}
	skip := int64(localLen) + int64(binary.LittleEndian.Uint16(buf[26:])) + int64(binary.LittleEndian.Uint16(buf[28:]))
	start := e.HeaderOffset + skip
	if start+e.CompressedSize > a.Size {
		return a.errf(e.HeaderOffset, e.Name, "data (%d bytes from %d) runs past the end of the file", e.CompressedSize, start)
	}
	var prefix []byte
	if skip < n {
		prefix = buf[skip:n]
		if int64(len(prefix)) > e.CompressedSize {
			prefix = prefix[:e.CompressedSize]
		}
	}
	o.src.reset(prefix, io.NewSectionReader(a.r, start+int64(len(prefix)), e.CompressedSize-int64(len(prefix))))
	return nil
}

// checkInflatable refuses entries whose declared sizes make them a bomb or too big to read.
func (a *Archive) checkInflatable(e *Entry) error {
	switch e.Method {
	case 0:
		if e.CompressedSize != e.UncompressedSize {
			return a.errf(e.HeaderOffset, e.Name, "stored entry with compressed size %d but size %d", e.CompressedSize, e.UncompressedSize)
		}
	case 8:
		// DEFLATE never grows data by more than 5 bytes per 16 KiB stored block plus a few bytes:
		// more compressed bytes than that means the declared size is a lie (the usual zip bomb
		// trick to get past size checks).
		if e.CompressedSize > e.UncompressedSize+e.UncompressedSize/1024+64 {
			return a.limitf(e.HeaderOffset, e.Name, "%d compressed bytes for a declared %d: the declared size is false (zip bomb or corrupt entry)", e.CompressedSize, e.UncompressedSize)
		}
		if e.UncompressedSize > 1<<20 && (e.CompressedSize == 0 || e.UncompressedSize/e.CompressedSize > a.lim.MaxRatio) {
			return a.limitf(e.HeaderOffset, e.Name, "declares %d bytes from %d compressed (ratio above %d:1): zip bomb", e.UncompressedSize, e.CompressedSize, a.lim.MaxRatio)
		}
	default:
		return a.errf(e.HeaderOffset, e.Name, "unsupported compression method %d", e.Method)
	}
	if e.UncompressedSize > a.lim.MaxEntryBytes {
		return a.limitf(e.HeaderOffset, e.Name, "declares %d bytes; the limit for an entry that is read is %d", e.UncompressedSize, a.lim.MaxEntryBytes)
	}
	if e.Flags&1 != 0 {
		return a.errf(e.HeaderOffset, e.Name, "encrypted entry")
	}
	return nil
}

// Open returns a reader of e's uncompressed bytes. It yields at most the declared size, fails
// with an error when the data inflates past it (a zip bomb lying about its size) or ends early,
// and checks the CRC-32 when read to the end. The reader is valid until the next Open.
func (a *Archive) Open(e *Entry) (io.Reader, error) { return a.op.open(e) }

func (o *entryOpener) open(e *Entry) (io.Reader, error) {
	a := o.a
	if err := a.checkInflatable(e); err != nil {
		return nil, err
	}
	if err := o.openData(e); err != nil {
		return nil, err
	}
	var raw io.Reader = &o.src
	if e.Method == 8 {
		if o.fr == nil {
			o.fr = flate.NewReader(&o.src)
		} else if err := o.fr.(flate.Resetter).Reset(&o.src, nil); err != nil {
			return nil, err
		}
		raw = o.fr
	}
	o.er = entryReader{a: a, e: e, r: raw, left: e.UncompressedSize}
	return &o.er, nil
}

// entryReader bounds and checks one entry's bytes.
type entryReader struct {
	a    *Archive
	e    *Entry
	r    io.Reader
	left int64
	crc  uint32
	err  error
}

func (er *entryReader) Read(p []byte) (int, error) {
	if er.err != nil {
		return 0, er.err
	}
	if er.left == 0 {
		// Declared size reached: the stream must end here.
		var one [1]byte
		if n, _ := io.ReadFull(er.r, one[:]); n > 0 {
			er.err = er.a.limitf(er.e.HeaderOffset, er.e.Name, "inflates past its declared size of %d bytes: zip bomb or corrupt entry", er.e.UncompressedSize)
			return 0, er.err
		}
		if er.crc != er.e.CRC32 {
			er.err = er.a.errf(er.e.HeaderOffset, er.e.Name, "CRC-32 mismatch: directory says %08x, data gives %08x", er.e.CRC32, er.crc)
			return 0, er.err
		}
		er.err = io.EOF
		return 0, io.EOF
	}
	if int64(len(p)) > er.left {
		p = p[:er.left]
	}
	n, err := er.r.Read(p)
	er.left -= int64(n)
	er.crc = crc32.Update(er.crc, crc32.IEEETable, p[:n])
	if err == io.EOF {
		if er.left > 0 {
			er.err = er.a.errf(er.e.HeaderOffset, er.e.Name, "data ends %d bytes before its declared size of %d", er.left, er.e.UncompressedSize)
			return n, er.err
		}
		err = nil
	} else if err != nil {
		er.err = &Error{Archive: er.a.Name, Offset: er.e.HeaderOffset, Entry: er.e.Name, Msg: "corrupt compressed data", Err: err}
		return n, er.err
	}
	return n, nil
}

// ReadAll reads a whole (small) entry, within the limits.
func (a *Archive) ReadAll(e *Entry) ([]byte, error) {
	r, err := a.Open(e)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, e.UncompressedSize)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// byteSource feeds the inflater: first the data bytes that came with the local header read,
// then the rest of the section through a small buffer. It implements io.ByteReader so that flate
// does not wrap it in a fresh bufio.Reader per entry.
type byteSource struct {
	head [localPrefetch]byte
	r    *io.SectionReader
	buf  [4096]byte
	cur  []byte // unread bytes: a window of head or buf
	err  error
}

func (b *byteSource) reset(prefix []byte, r *io.SectionReader) { b.cur, b.r, b.err = prefix, r, nil }

func (b *byteSource) fill() bool {
	if b.err != nil {
		return false
	}
	n, err := b.r.Read(b.buf[:])
	b.cur = b.buf[:n]
	if err != nil && !(err == io.EOF && n > 0) {
		b.err = err
	}
	return n > 0
}

func (b *byteSource) Read(p []byte) (int, error) {
	if len(b.cur) == 0 && !b.fill() {
		return 0, b.err
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

func (b *byteSource) ReadByte() (byte, error) {
	if len(b.cur) == 0 && !b.fill() {
		return 0, b.err
	}
	c := b.cur[0]
	b.cur = b.cur[1:]
	return c, nil
}
