package restorecode

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// Input is one place to read classes from: a jar, a directory of classes, or a .class file at
// Path, or, when Open or Jar is set, classes the caller already holds (Path is then only the name
// the report uses).
type Input struct {
	Path string
	// Open calls visit with the entry name and bytes of each class; visit's error stops it and is
	// returned. The bytes must stay unchanged until Analyze returns.
	Open func(ctx context.Context, visit func(entry string, class []byte) error) error
	// Jar, when set, is a jar of Size bytes (a daemon's copy of a remote jar), read as a jar at
	// Path is: entries inflated on demand, one at a time.
	Jar  io.ReaderAt
	Size int64
}

// Options bound the analysis. Zero fields take the defaults.
type Options struct {
	MaxEntries    int   // entries per jar or directory (default 200,000)
	MaxClassBytes int64 // bytes per class file (default 8 MiB)
	MaxDepth      int   // calls followed into helpers (default 5)
	MaxSteps      int   // instructions interpreted per class (default 2,000,000)
}

func (o Options) withDefaults() Options {
	if o.MaxEntries <= 0 {
		o.MaxEntries = 200_000
	}
	if o.MaxClassBytes <= 0 {
		o.MaxClassBytes = 8 << 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 5
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 2_000_000
	}
	return o
}

// entry is a class known by name; its bytes are read and parsed on demand.
type entry struct {
	jar, path string
	// read returns the class's bytes, in buf when it is large enough (the screen reuses one
	// buffer for every class it drops).
	read   func(buf []byte) ([]byte, error)
	class  *classfile.Class
	err    error
	parsed bool
}

// classSet holds every class of the inputs by internal name; the first input wins a duplicate.
type classSet struct {
	byName  map[string]*entry
	order   []string
	errs    []Error
	opts    Options
	closers []io.Closer
	// candidates are the parsed classes that declare a restore root or register state.
	candidates []*classfile.Class
	hier       *hierarchy // the subtype index, built on first use (hierarchy.go)
}

func (s *classSet) close() {
	for _, c := range s.closers {
		c.Close()
	}
}

// load returns the parsed class, nil when it is not in the set or does not parse (the error is
// recorded once).
func (s *classSet) load(name string) *classfile.Class {
	e := s.byName[name]
	if e == nil {
		return nil
	}
	if !e.parsed {
		b, err := e.read(nil)
		s.parse(e, b, err)
	}
	return e.class
}

// parse parses an entry's bytes once and records a failure as an Error.
func (s *classSet) parse(e *entry, b []byte, err error) *classfile.Class {
	if e.parsed {
		return e.class
	}
	e.parsed = true
	if err == nil {
		e.class, err = classfile.Parse(b)
	}
	if err == nil && s.byName[e.class.Name] == nil {
		s.byName[e.class.Name] = e // a directory given below its classpath root names classes by path
	}
	if err != nil {
		e.err = err
		off := int64(0)
		var fe *classfile.FormatError
		if errors.As(err, &fe) {
			off = fe.Off
		}
		s.errs = append(s.errs, Error{Jar: e.jar, Class: e.path, Offset: int(off), Message: err.Error()})
	}
	return e.class
}

// screenWords are the names a class that may register or restore operator state holds in its
// constant pool; a class without any of them is not parsed unless another class needs it.
var screenWords = [][]byte{[]byte("initializeState"), []byte("restoreState"), []byte("ListState"),
	[]byte("getBroadcastState"), []byte("getOperatorState"), []byte("restoreWriter")}

// mayRegister looks for the screen words in the constant pool only (the code and attributes
// after it hold no names); a class whose pool cannot be walked is screened whole.
func mayRegister(b []byte) bool {
	b = b[:poolEnd(b)]
	for _, w := range screenWords {
		if bytes.Contains(b, w) {
			return true
		}
	}
	return false
}

// poolEnd returns the offset just past the constant pool, or len(b) when the pool is malformed
// (the parser then reports it). It checks every length against what is left.
func poolEnd(b []byte) int {
	if len(b) < 10 {
		return len(b)
	}
	n, off := int(binary.BigEndian.Uint16(b[8:])), 10
	for i := 1; i < n; i++ {
		if off >= len(b) {
			return len(b)
		}
		size, ok := constSizes[b[off]]
		switch {
		case !ok:
			return len(b)
		case b[off] == classfile.TagUtf8 && off+3 <= len(b):
			size = 3 + int(binary.BigEndian.Uint16(b[off+1:]))
		case b[off] == classfile.TagLong || b[off] == classfile.TagDouble:
			i++
		}
		off += size
	}
	return min(off, len(b))
}

// constSizes is each constant tag's size in bytes (Utf8: its header; the text follows).
var constSizes = map[byte]int{
	classfile.TagUtf8: 3, classfile.TagInteger: 5, classfile.TagFloat: 5, classfile.TagLong: 9,
	classfile.TagDouble: 9, classfile.TagClass: 3, classfile.TagString: 3, classfile.TagFieldref: 5,
	classfile.TagMethodref: 5, classfile.TagInterfaceMethodref: 5, classfile.TagNameAndType: 5,
	classfile.TagMethodHandle: 4, classfile.TagMethodType: 3, classfile.TagDynamic: 5,
	classfile.TagInvokeDynamic: 5, classfile.TagModule: 3, classfile.TagPackage: 3,
}

// add registers a class under the name its path implies; the name is checked when parsed.
func (s *classSet) add(jar, path string, read func([]byte) ([]byte, error)) {
	name := strings.TrimSuffix(filepath.ToSlash(path), ".class")
	if _, dup := s.byName[name]; dup {
		return
	}
	s.byName[name] = &entry{jar: jar, path: path, read: read}
	s.order = append(s.order, name)
}

func (s *classSet) addInput(ctx context.Context, in Input) error {
	switch {
	case in.Open != nil:
		return s.addOpen(ctx, in)
	case in.Jar != nil:
		zr, err := zip.NewReader(in.Jar, in.Size)
		if err != nil {
			return err
		}
		return s.addZip(ctx, in.Path, zr)
	case strings.HasSuffix(in.Path, ".class"):
		return s.addClassFile(in.Path, in.Path, in.Path)
	}
	st, err := os.Stat(in.Path)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return s.addDir(ctx, in.Path)
	}
	return s.addJar(ctx, in.Path)
}

func (s *classSet) addOpen(ctx context.Context, in Input) error {
	n := 0
	return in.Open(ctx, func(path string, b []byte) error {
		if n++; n > s.opts.MaxEntries {
			return fmt.Errorf("more than %d classes", s.opts.MaxEntries)
		}
		if int64(len(b)) > s.opts.MaxClassBytes {
			s.errs = append(s.errs, Error{Jar: in.Path, Class: path, Message: fmt.Sprintf("class of %d bytes exceeds the limit of %d", len(b), s.opts.MaxClassBytes)})
			return nil
		}
		if isClassEntry(path) {
			s.add(in.Path, path, func([]byte) ([]byte, error) { return b, nil })
		}
		return ctx.Err()
	})
}

// addClassFile adds one class file; its name comes from the file itself.
func (s *classSet) addClassFile(jar, path, label string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() > s.opts.MaxClassBytes {
		return fmt.Errorf("%s: %d bytes exceeds the class size limit of %d", label, st.Size(), s.opts.MaxClassBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	c, err := classfile.Parse(b)
	if err != nil {
		s.errs = append(s.errs, Error{Jar: jar, Class: label, Message: err.Error()})
		return nil
	}
	s.add(jar, c.Name+".class", func([]byte) ([]byte, error) { return b, nil })
	return nil
}

func (s *classSet) addDir(ctx context.Context, root string) error {
	n := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !isClassEntry(p) {
			return nil
		}
		if n++; n > s.opts.MaxEntries {
			return fmt.Errorf("%s: more than %d classes", root, s.opts.MaxEntries)
		}
		rel, _ := filepath.Rel(root, p)
		size := s.opts.MaxClassBytes
		s.add(root, rel, func([]byte) ([]byte, error) { return readLimited(p, size) })
		return nil
	})
}

func readLimited(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAllLimited(f, max)
}

func readAllLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("class larger than the limit of %d bytes", max)
	}
	return b, err
}

func (s *classSet) addJar(ctx context.Context, path string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, zr)
	return s.addZip(ctx, path, &zr.Reader)
}

// addZip adds the class entries of a jar; path names it in the report.
func (s *classSet) addZip(ctx context.Context, path string, zr *zip.Reader) error {
	if len(zr.File) > s.opts.MaxEntries {
		return fmt.Errorf("%s: %d entries exceeds the limit of %d", path, len(zr.File), s.opts.MaxEntries)
	}
	for i, f := range zr.File {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !isClassEntry(f.Name) || f.FileInfo().IsDir() {
			continue
		}
		if f.UncompressedSize64 > uint64(s.opts.MaxClassBytes) {
			s.errs = append(s.errs, Error{Jar: path, Class: f.Name, Message: fmt.Sprintf("class of %d bytes exceeds the limit of %d", f.UncompressedSize64, s.opts.MaxClassBytes)})
			continue
		}
		s.add(path, f.Name, func(buf []byte) ([]byte, error) { return readEntry(f, buf) })
	}
	return nil
}

// readEntry inflates a jar entry into buf (or a new slice of its declared size, at most
// MaxClassBytes as addJar checked); archive/zip checks the size and CRC at the end.
func readEntry(f *zip.File, buf []byte) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	n := int(f.UncompressedSize64)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, err
	}
	if _, err := rc.Read(make([]byte, 1)); err != io.EOF {
		return nil, fmt.Errorf("%s: more bytes than the declared %d, or a checksum error: %v", f.Name, n, err)
	}
	return buf, nil
}

// isClassEntry: a .class outside META-INF (multi-release variants and module descriptors are not
// operators).
func isClassEntry(p string) bool {
	p = filepath.ToSlash(p)
	return strings.HasSuffix(p, ".class") && !strings.HasPrefix(p, "META-INF/") &&
		!strings.Contains(p, "/META-INF/") && !strings.HasSuffix(p, "module-info.class") && !strings.HasSuffix(p, "package-info.class")
}
