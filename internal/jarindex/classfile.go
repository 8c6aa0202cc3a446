package jarindex

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// ClassMagic starts every class file.
const ClassMagic = 0xCAFEBABE

// ClassFormatError says what is wrong with a class file and where.
type ClassFormatError struct {
	Offset int64
	Msg    string
}

func (e *ClassFormatError) Error() string {
	return fmt.Sprintf("class file at byte %d: %s", e.Offset, e.Msg)
}

// ClassHeader is the fixed start of a class file.
type ClassHeader struct {
	Minor, Major uint16
}

// JavaRelease is the Java release whose class file version this is (52 → 8, 61 → 17); 0 for
// versions before Java 1.2's 46.
func (h ClassHeader) JavaRelease() int {
	if h.Major < 46 {
		return 0
	}
	return int(h.Major) - 44
}

// ParseClassHeader reads magic, minor and major version from the first 8 bytes.
func ParseClassHeader(b []byte) (ClassHeader, error) {
	if len(b) < 8 {
		return ClassHeader{}, &ClassFormatError{Offset: int64(len(b)), Msg: fmt.Sprintf("%d bytes, a class file starts with 8", len(b))}
	}
	if m := binary.BigEndian.Uint32(b); m != ClassMagic {
		return ClassHeader{}, &ClassFormatError{Offset: 0, Msg: fmt.Sprintf("magic 0x%08x, want 0xCAFEBABE", m)}
	}
	return ClassHeader{Minor: binary.BigEndian.Uint16(b[4:]), Major: binary.BigEndian.Uint16(b[6:])}, nil
}

// Constant pool tags (JVMS §4.4).
const (
	tagUtf8               = 1
	tagInteger            = 3
	tagFloat              = 4
	tagLong               = 5
	tagDouble             = 6
	tagClass              = 7
	tagString             = 8
	tagFieldref           = 9
	tagMethodref          = 10
	tagInterfaceMethodref = 11
	tagNameAndType        = 12
	tagMethodHandle       = 15
	tagMethodType         = 16
	tagDynamic            = 17
	tagInvokeDynamic      = 18
	tagModule             = 19
	tagPackage            = 20
)

// This scan is deliberately separate from internal/classfile, which builds a full model of a class
// held in memory: the classpath check feeds it partially inflated jar entries through an
// io.Reader, needs only the class names, must stop right after the constant pool (the rest of
// the entry is never inflated) and reuses its buffers across thousands of classes.

// ClassRefs parses a class file's header and constant pool from r (at most max bytes) and calls
// visit with the internal name ("org/apache/kafka/clients/producer/ProducerRecord") of every
// class the constant pool names: CONSTANT_Class entries (array element types unwrapped) and the
// L...; types inside descriptors and generic signatures. These are the classes a loader resolves
// while linking this class and the ones its method signatures constrain. Names may repeat; the
// slice passed to visit is only valid during the call. It stops after the constant pool.
func ClassRefs(r io.Reader, max int64, visit func(internalName []byte)) (ClassHeader, error) {
	return newCPParser().parse(r, max, visit)
}

// cpParser keeps its buffers between classes (the classpath check parses thousands).
type cpParser struct {
	r     *bufio.Reader
	lr    io.LimitedReader
	off   int64
	max   int64
	tmp   []byte
	spans []span
	store []byte
	class []uint16
	named []bool
}

type span struct{ start, end int32 }

func newCPParser() *cpParser { return &cpParser{r: bufio.NewReaderSize(nil, 8<<10)} }

func (p *cpParser) fail(format string, args ...any) error {
	return &ClassFormatError{Offset: p.off, Msg: fmt.Sprintf(format, args...)}
}

func (p *cpParser) read(n int) ([]byte, error) {
	if cap(p.tmp) < n {
		p.tmp = make([]byte, n)
	}
	b := p.tmp[:n]
	if _, err := io.ReadFull(p.r, b); err != nil {
		return nil, p.fail("truncated (wanted %d more bytes): %v", n, err)
	}
	p.off += int64(n)
	return b, nil
}

func (p *cpParser) u2() (int, error) {
	b, err := p.read(2)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(b)), nil
}

func (p *cpParser) parse(r io.Reader, max int64, visit func([]byte)) (ClassHeader, error) {
	p.lr = io.LimitedReader{R: r, N: max}
	p.r.Reset(&p.lr)
	p.off, p.max = 0, max
	b, err := p.read(8)
	if err != nil {
		return ClassHeader{}, err
	}
	h, err := ParseClassHeader(b)
	if err != nil {
		return h, err
	}
	count, err := p.u2()
	if err != nil {
		return h, err
	}
	if count == 0 {
		return h, p.fail("constant_pool_count 0")
	}
	// Every entry takes at least 3 bytes; a count the remaining bytes cannot hold is corrupt.
	if int64(count-1)*3 > p.max-p.off {
		return h, p.fail("constant_pool_count %d does not fit in %d bytes", count, p.max)
	}
	// The Utf8 entries that Class entries point at are only known after the whole pool has
	// been read (forward references are legal), so remember the indexes, and the Utf8 strings
	// that may be class names or descriptors, by index.
	if cap(p.spans) < count {
		p.spans = make([]span, count)
		p.named = make([]bool, count)
	}
	utf8 := p.spans[:count]
	clear(utf8)
	store := p.store[:0]
	classIdx := p.class[:0]
	defer func() { p.store, p.class = store[:0], classIdx[:0] }()
	for i := 1; i < count; i++ {
		tb, err := p.read(1)
		if err != nil {
			return h, err
		}
		tag := tb[0]
		switch tag {
		case tagUtf8:
			n, err := p.u2()
			if err != nil {
				return h, err
			}
			s, err := p.read(n)
			if err != nil {
				return h, err
			}
			if mayName(s) {
				utf8[i] = span{int32(len(store)), int32(len(store) + n)}
				store = append(store, s...)
			} else {
				utf8[i] = span{-1, -1}
			}
		case tagClass:
			idx, err := p.u2()
			if err != nil {
				return h, err
			}
			if idx == 0 || idx >= count {
				return h, p.fail("constant %d: Class name index %d outside the pool of %d", i, idx, count)
			}
			classIdx = append(classIdx, uint16(idx))
		case tagString, tagMethodType, tagModule, tagPackage:
			if _, err := p.read(2); err != nil {
				return h, err
			}
		case tagMethodHandle:
			if _, err := p.read(3); err != nil {
				return h, err
			}
		case tagInteger, tagFloat, tagFieldref, tagMethodref, tagInterfaceMethodref, tagNameAndType, tagDynamic, tagInvokeDynamic:
			if _, err := p.read(4); err != nil {
				return h, err
			}
		case tagLong, tagDouble:
			if _, err := p.read(8); err != nil {
				return h, err
			}
			i++ // takes two slots (JVMS §4.4.5)
		default:
			return h, p.fail("constant %d: unknown tag %d", i, tag)
		}
	}
	isClassName := p.named[:count]
	clear(isClassName)
	for _, idx := range classIdx {
		isClassName[idx] = true
	}
	for i, s := range utf8 {
		if s.end <= s.start {
			continue
		}
		str := store[s.start:s.end]
		if isClassName[i] {
			name := str
			for len(name) > 0 && name[0] == '[' { // array class: unwrap to its element type
				name = name[1:]
			}
			if len(name) > 2 && name[0] == 'L' && name[len(name)-1] == ';' {
				name = name[1 : len(name)-1]
			} else if len(name) != len(str) {
				continue // primitive array
			}
			if len(name) > 0 {
				visit(name)
			}
			continue
		}
		descriptorRefs(str, visit)
	}
	return h, nil
}

// mayName is a cheap filter for Utf8 constants worth keeping: class names and descriptors
// contain '/' or ';'. String literals and member names mostly do not.
func mayName(s []byte) bool {
	for _, c := range s {
		if c == '/' || c == ';' {
			return true
		}
	}
	return false
}

// descriptorRefs visits the class names of the L...; types in a field or method descriptor or a
// generic signature ("Ljava/util/List<Lorg/x/Y;>;" gives java/util/List and org/x/Y).
func descriptorRefs(s []byte, visit func([]byte)) {
	for i := 0; i < len(s); i++ {
		if s[i] != 'L' || (i > 0 && !isDescriptorBoundary(s[i-1])) {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != ';' && s[j] != '<' && s[j] != '.' && s[j] != ' ' && s[j] != ')' && s[j] != '(' {
			j++
		}
		if j < len(s) && (s[j] == ';' || s[j] == '<' || s[j] == '.') && j > i+1 && containsSlashOrValid(s[i+1:j]) {
			visit(s[i+1 : j])
		}
		i = j
	}
}

func isDescriptorBoundary(c byte) bool {
	switch c {
	case '(', ')', ';', '[', '<', '>', '+', '-', '*', ':', '^':
		return true
	}
	return false
}

func containsSlashOrValid(n []byte) bool {
	for _, c := range n {
		if c == '/' {
			return true
		}
	}
	return false
}
