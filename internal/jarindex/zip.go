// Package jarindex indexes Java archives without extracting them: it reads the zip central
// directory over an io.ReaderAt with archive/zip (zip64 and prepended data included), names every
// class with its size and a content hash, reads the class file version from the first bytes of a class, and parses constant pools on
// demand to see which classes a class references. Flink Preflight's classpath check builds on it.
//
// It is written for hostile input: the end record's entry count and directory size are checked
// against the file's size and the configured Limits before archive/zip reads the directory, inflation is bounded by the
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
	"archive/zip"
	"bufio"
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
	file             *zip.File
}

// IsDir reports a folder entry.
func (e *Entry) IsDir() bool { return strings.HasSuffix(e.Name, "/") }

// The end of central directory records, which OpenArchive reads itself to check the declared
// entry count and directory size before archive/zip reads (and allocates) the directory.
const (
	eocdSig       = 0x06054b50
	eocd64Sig     = 0x06064b50
	eocd64LocSig  = 0x07064b50
	centralSig    = 0x02014b50
	eocdLen       = 22
	eocd64LocLen  = 20
	eocd64Len     = 56
	centralLen    = 46 // a central directory record without its name, extra field and comment
	maxCommentLen = 0xFFFF
)

// Archive is an opened zip: its central directory, read and checked.
type Archive struct {
	Name    string
	Size    int64
	Entries []Entry
	r       io.ReaderAt
	lim     Limits
	cp      *cpParser // ClassRefs' parser, reused: ClassRefs is not safe for concurrent use
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
// errors. check, when non-nil, is called between reads of the directory; an error from it stops
// the read (pass ctx.Err).
func OpenArchive(r io.ReaderAt, size int64, name string, lim Limits, check func() error) (*Archive, error) {
	a := &Archive{Name: name, Size: size, r: r, lim: lim.withDefaults()}
	end, err := a.readEnd()
	if err != nil {
		return nil, err
	}
	cr := &checkedReaderAt{r: r, check: check}
	zr, err := zip.NewReader(cr, size)
	cr.check = nil // entries are read later, under their callers' own checks
	switch {
	case err != nil && check != nil && check() != nil:
		return nil, check()
	case errors.Is(err, zip.ErrFormat), errors.Is(err, io.ErrUnexpectedEOF):
		// archive/zip reads records up to the first that is not one, and compares their number
		// with the declared one.
		return nil, a.errf(end.dirOff, "", "central directory records do not match the %d its end record declares: a record is missing, corrupt or extra", end.count)
	case err != nil:
		return nil, &Error{Archive: name, Offset: end.dirOff, Msg: fmt.Sprintf("cannot read the central directory of %d entries", end.count), Err: err}
	case uint64(len(zr.File)) != end.count:
		return nil, a.errf(end.dirOff, "", "central directory holds %d entries; its end record declares %d", len(zr.File), end.count)
	}
	a.Entries = make([]Entry, len(zr.File))
	for i, f := range zr.File {
		if check != nil && i%4096 == 0 {
			if err := check(); err != nil {
				return nil, err
			}
		}
		if len(f.Name) > a.lim.MaxNameBytes {
			return nil, a.limitf(-1, "", "entry %d: name of %d bytes; the limit is %d", i, len(f.Name), a.lim.MaxNameBytes)
		}
		if msg := unsafeName(f.Name); msg != "" {
			return nil, a.errf(-1, f.Name, "unsafe entry name (%s); a zip-slip archive is refused", msg)
		}
		if f.CompressedSize64 > uint64(size) || f.UncompressedSize64 > 1<<62 {
			return nil, a.errf(-1, f.Name, "data (%d bytes) lies outside the %d-byte file", f.CompressedSize64, size)
		}
		a.Entries[i] = Entry{Name: f.Name, Method: f.Method, Flags: f.Flags, CRC32: f.CRC32,
			CompressedSize: int64(f.CompressedSize64), UncompressedSize: int64(f.UncompressedSize64), file: f}
	}
	return a, nil
}

// checkedReaderAt calls check, while set, before each read: archive/zip reads the directory
// through it in 4 KiB pieces, so a cancelled context stops a large directory.
type checkedReaderAt struct {
	r     io.ReaderAt
	check func() error
}

func (c *checkedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if c.check != nil {
		if err := c.check(); err != nil {
			return 0, err
		}
	}
	return c.r.ReadAt(p, off)
}

// directoryEnd is what the end records say of the central directory.
type directoryEnd struct {
	recOff int64  // of the end record archive/zip starts from (the zip64 one for zip64)
	dirOff int64  // where the directory starts, prepended data included
	count  uint64 // declared entries
}

// readEnd finds the end of central directory record (and its zip64 form) the way archive/zip
// does, the last one in the file, and checks what it declares: one volume, at most MaxEntries
// entries, a directory that fits before the record and is large enough for its entries but not
// larger than they can be. archive/zip reads directory records up to the first that is not one,
// which the end record stops, so this bounds the records it reads and allocates.
func (a *Archive) readEnd() (directoryEnd, error) {
	size := a.Size
	if size < eocdLen {
		return directoryEnd{}, a.errf(-1, "", "%d bytes is too short for a zip file (no end of central directory record)", size)
	}
	tail := min(int64(eocdLen+maxCommentLen), size)
	buf := make([]byte, tail)
	if _, err := a.r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return directoryEnd{}, &Error{Archive: a.Name, Offset: size - tail, Msg: "cannot read the end of the file", Err: err}
	}
	pos := -1
	for i := len(buf) - eocdLen; i >= 0 && pos < 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == eocdSig {
			pos = i
		}
	}
	// The comment must end exactly at the end of the file.
	if pos < 0 || pos+eocdLen+int(binary.LittleEndian.Uint16(buf[pos+20:])) != len(buf) {
		return directoryEnd{}, a.errf(-1, "", "not a zip file: no end of central directory record in the last %d bytes", tail)
	}
	eocdOff := size - tail + int64(pos)
	e := buf[pos:]
	disk, cdDisk := uint32(binary.LittleEndian.Uint16(e[4:])), uint32(binary.LittleEndian.Uint16(e[6:]))
	end := directoryEnd{recOff: eocdOff, count: uint64(binary.LittleEndian.Uint16(e[10:]))}
	cdSize := uint64(binary.LittleEndian.Uint32(e[12:]))
	cdOff := uint64(binary.LittleEndian.Uint32(e[16:]))
	if end.count == 0xFFFF || cdSize == 0xFFFFFFFF || cdOff == 0xFFFFFFFF {
		r64, err := a.readEnd64(eocdOff)
		if err != nil {
			return directoryEnd{}, err
		}
		end.recOff = int64(binary.LittleEndian.Uint64(r64[eocd64Len:]))
		disk, cdDisk = binary.LittleEndian.Uint32(r64[16:]), binary.LittleEndian.Uint32(r64[20:])
		end.count = binary.LittleEndian.Uint64(r64[32:])
		cdSize, cdOff = binary.LittleEndian.Uint64(r64[40:]), binary.LittleEndian.Uint64(r64[48:])
	}
	switch {
	case disk != 0 || cdDisk != 0:
		return directoryEnd{}, a.errf(eocdOff, "", "multi-volume zip archives are not supported")
	case end.count > uint64(a.lim.MaxEntries):
		return directoryEnd{}, a.limitf(eocdOff, "", "declares %d entries; the limit is %d", end.count, a.lim.MaxEntries)
	case cdOff > uint64(end.recOff) || cdSize > uint64(end.recOff)-cdOff:
		return directoryEnd{}, a.errf(eocdOff, "", "central directory (offset %d, %d bytes) does not fit before its end record at %d", cdOff, cdSize, end.recOff)
	case end.count*centralLen > cdSize:
		return directoryEnd{}, a.errf(eocdOff, "", "declares %d entries but its central directory of %d bytes holds at most %d", end.count, cdSize, cdSize/centralLen)
	case cdSize > end.count*uint64(centralLen+a.lim.MaxNameBytes+2*0xFFFF):
		return directoryEnd{}, a.errf(eocdOff, "", "central directory of %d bytes is larger than its %d declared entries can be", cdSize, end.count)
	}
	// Prepended data (self-extracting archives, shell stubs) shifts every offset; Java and
	// archive/zip accept it.
	end.dirOff = end.recOff - int64(cdSize)
	if cd := make([]byte, 4); end.count > 0 {
		if _, err := a.r.ReadAt(cd, end.dirOff); err != nil {
			return directoryEnd{}, &Error{Archive: a.Name, Offset: end.dirOff, Msg: "cannot read the central directory", Err: err}
		}
		if sig := binary.LittleEndian.Uint32(cd); sig != centralSig {
			return directoryEnd{}, a.errf(end.dirOff, "", "entry 0: bad central directory signature 0x%08x", sig)
		}
	}
	return end, nil
}

// readEnd64 returns the zip64 end of central directory record, found through the locator just
// before the end record at eocdOff, followed by its offset (8 bytes, little-endian).
func (a *Archive) readEnd64(eocdOff int64) ([]byte, error) {
	locOff := eocdOff - eocd64LocLen
	if locOff < 0 {
		return nil, a.errf(eocdOff, "", "zip64 values without a zip64 locator")
	}
	loc := make([]byte, eocd64LocLen)
	if _, err := a.r.ReadAt(loc, locOff); err != nil {
		return nil, &Error{Archive: a.Name, Offset: locOff, Msg: "cannot read the zip64 locator", Err: err}
	}
	if binary.LittleEndian.Uint32(loc) != eocd64LocSig {
		return nil, a.errf(locOff, "", "zip64 values but no zip64 end of central directory locator")
	}
	rec64 := int64(binary.LittleEndian.Uint64(loc[8:]))
	if rec64 < 0 || rec64 > locOff-eocd64Len {
		return nil, a.errf(locOff, "", "zip64 end of central directory offset %d is outside the file", rec64)
	}
	r64 := make([]byte, eocd64Len+8)
	if _, err := a.r.ReadAt(r64[:eocd64Len], rec64); err != nil {
		return nil, &Error{Archive: a.Name, Offset: rec64, Msg: "cannot read the zip64 end of central directory", Err: err}
	}
	if binary.LittleEndian.Uint32(r64) != eocd64Sig {
		return nil, a.errf(rec64, "", "bad zip64 end of central directory signature")
	}
	binary.LittleEndian.PutUint64(r64[eocd64Len:], uint64(rec64))
	return r64, nil
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

// checkInflatable refuses entries whose declared sizes make them a bomb or too big to read.
func (a *Archive) checkInflatable(e *Entry) error {
	switch e.Method {
	case zip.Store:
		if e.CompressedSize != e.UncompressedSize {
			return a.errf(-1, e.Name, "stored entry with compressed size %d but size %d", e.CompressedSize, e.UncompressedSize)
		}
	case zip.Deflate:
		// DEFLATE never grows data by more than 5 bytes per 16 KiB stored block plus a few bytes:
		// more compressed bytes than that means the declared size is a lie (the usual zip bomb
		// trick to get past size checks).
		if e.CompressedSize > e.UncompressedSize+e.UncompressedSize/1024+64 {
			return a.limitf(-1, e.Name, "%d compressed bytes for a declared %d: the declared size is false (zip bomb or corrupt entry)", e.CompressedSize, e.UncompressedSize)
		}
		if e.UncompressedSize > 1<<20 && (e.CompressedSize == 0 || e.UncompressedSize/e.CompressedSize > a.lim.MaxRatio) {
			return a.limitf(-1, e.Name, "declares %d bytes from %d compressed (ratio above %d:1): zip bomb", e.UncompressedSize, e.CompressedSize, a.lim.MaxRatio)
		}
	default:
		return a.errf(-1, e.Name, "unsupported compression method %d", e.Method)
	}
	if e.UncompressedSize > a.lim.MaxEntryBytes {
		return a.limitf(-1, e.Name, "declares %d bytes; the limit for an entry that is read is %d", e.UncompressedSize, a.lim.MaxEntryBytes)
	}
	if e.Flags&1 != 0 {
		return a.errf(-1, e.Name, "encrypted entry")
	}
	return nil
}

// dataOffset returns where e's compressed data starts (archive/zip reads its local header),
// checking that the data lies inside the file.
func (a *Archive) dataOffset(e *Entry) (int64, error) {
	off, err := e.file.DataOffset()
	switch {
	case errors.Is(err, zip.ErrFormat):
		return 0, a.errf(-1, e.Name, "bad local header signature")
	case err != nil:
		return 0, &Error{Archive: a.Name, Offset: -1, Entry: e.Name, Msg: "cannot read the local header", Err: err}
	case off+e.CompressedSize > a.Size:
		return 0, a.errf(off, e.Name, "data (%d bytes from %d) runs past the end of the file", e.CompressedSize, off)
	}
	return off, nil
}

// Open returns a reader of e's uncompressed bytes (archive/zip's, its errors named). It yields
// at most the declared size, fails with an error when the data inflates past it (a zip bomb
// lying about its size) or ends early, and checks the CRC-32 when read to the end. Close it to
// give its inflater back.
func (a *Archive) Open(e *Entry) (io.ReadCloser, error) {
	if err := a.checkInflatable(e); err != nil {
		return nil, err
	}
	off, err := a.dataOffset(e)
	if err != nil {
		return nil, err
	}
	rc, err := e.file.Open()
	if err != nil {
		return nil, &Error{Archive: a.Name, Offset: off, Entry: e.Name, Msg: "cannot open the entry", Err: err}
	}
	return &entryReader{a: a, e: e, off: off, rc: rc}, nil
}

// entryReader names archive/zip's errors for one entry and checks its CRC-32 itself (archive/zip
// skips the check when the directory says 0).
type entryReader struct {
	a   *Archive
	e   *Entry
	off int64 // of the entry's data
	rc  io.ReadCloser
	crc uint32
	err error
}

func (er *entryReader) Read(p []byte) (int, error) {
	if er.err != nil {
		return 0, er.err
	}
	n, err := er.rc.Read(p)
	er.crc = crc32.Update(er.crc, crc32.IEEETable, p[:n])
	a, e := er.a, er.e
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF && er.crc == e.CRC32, errors.Is(err, zip.ErrChecksum) && er.crc == e.CRC32:
		er.err = io.EOF
	case err == io.EOF, errors.Is(err, zip.ErrChecksum):
		er.err = a.errf(er.off, e.Name, "CRC-32 mismatch: directory says %08x, data gives %08x", e.CRC32, er.crc)
	case errors.Is(err, zip.ErrFormat): // archive/zip's answer to more bytes than declared
		er.err = a.limitf(er.off, e.Name, "inflates past its declared size of %d bytes: zip bomb or corrupt entry", e.UncompressedSize)
	case errors.Is(err, io.ErrUnexpectedEOF):
		er.err = a.errf(er.off, e.Name, "data ends before its declared size of %d", e.UncompressedSize)
	default:
		er.err = &Error{Archive: a.Name, Offset: er.off, Entry: e.Name, Msg: "corrupt compressed data", Err: err}
	}
	if er.err == io.EOF {
		return n, io.EOF
	}
	return 0, er.err
}

func (er *entryReader) Close() error { return er.rc.Close() }

// ReadAll reads a whole (small) entry, within the limits.
func (a *Archive) ReadAll(e *Entry) ([]byte, error) {
	r, err := a.Open(e)
	if err != nil {
		return nil, err
	}
	defer r.Close()
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

// readHeader reads the first 8 bytes of a class entry; for a deflated entry with inflatePrefix,
// which decodes just those bytes, reading the compressed data through br.
func (a *Archive) readHeader(e *Entry, buf []byte, br *bufio.Reader) (ClassHeader, error) {
	if e.UncompressedSize < 8 {
		return ClassHeader{}, a.errf(-1, e.Name, "class file of %d bytes", e.UncompressedSize)
	}
	if err := a.checkInflatable(e); err != nil {
		return ClassHeader{}, err
	}
	off, err := a.dataOffset(e)
	if err != nil {
		return ClassHeader{}, err
	}
	br.Reset(io.NewSectionReader(a.r, off, e.CompressedSize))
	var n int
	if e.Method == zip.Deflate {
		n, err = inflatePrefix(br, buf[:8])
	} else {
		n, err = io.ReadFull(br, buf[:8])
	}
	if err == nil && n < 8 {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return ClassHeader{}, &Error{Archive: a.Name, Offset: off, Entry: e.Name, Msg: "cannot read the class header", Err: err}
	}
	h, err := ParseClassHeader(buf[:8])
	if err != nil {
		return h, &Error{Archive: a.Name, Offset: off, Entry: e.Name, Msg: "not a class file", Err: err}
	}
	return h, nil
}
