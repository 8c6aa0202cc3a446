package jarindex

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Class is one class file of a jar.
type Class struct {
	// Name is the binary name with dots: org.apache.kafka.clients.producer.ProducerRecord.
	Name string
	// Entry indexes Jar.Archive.Entries.
	Entry int
	// Size is the uncompressed size; CRC32 is the directory's checksum. Together they are the
	// content hash: equal pairs mean the same bytes.
	Size  int64
	CRC32 uint32
	// Major is the class file major version (52 = Java 8); 0 when not read.
	Major uint16
	// Release is N for a multi-release entry META-INF/versions/N/..., else 0.
	Release int
}

// Hash is the content hash of the class: "crc32:size".
func (c *Class) Hash() string { return fmt.Sprintf("%08x:%d", c.CRC32, c.Size) }

// Package returns the package of the class ("" for the default package).
func (c *Class) Package() string {
	if i := strings.LastIndexByte(c.Name, '.'); i >= 0 {
		return c.Name[:i]
	}
	return ""
}

// Artifact is a Maven artifact a jar contains, from META-INF/maven/G/A/pom.properties (shading
// keeps these files, so they tell which modules an uber jar bundles).
type Artifact struct {
	GroupID, ArtifactID, Version string
}

// Jar is the index of one archive.
type Jar struct {
	Path    string
	Size    int64
	Archive *Archive
	// Classes in entry order; multi-release variants are separate classes with Release set.
	Classes []Class
	// Nested lists .jar/.zip entries inside the archive: Java's class loaders do not read them.
	Nested []string
	// Signatures lists META-INF/*.SF, *.RSA, *.DSA, *.EC files: the jar is (or claims to be)
	// signed.
	Signatures []string
	// MultiRelease is the manifest's Multi-Release: true.
	MultiRelease bool
	// Artifacts from the pom.properties files, sorted.
	Artifacts []Artifact
	// Services are the files under META-INF/services/ (service interface names).
	Services []string
	// ScalaVersion is version.number of a bundled scala-library (library.properties), if any.
	ScalaVersion string
	// Manifest is the raw META-INF/MANIFEST.MF (small), if present.
	Manifest []byte
	closer   io.Closer
	// Entries is the number of zip entries.
	Entries int
}

// Options select what Index reads beyond the central directory.
type Options struct {
	Limits Limits
	// ClassVersions reads the first 8 bytes of every class for its major version.
	ClassVersions bool
}

// IndexFile opens and indexes the jar at p.
func IndexFile(ctx context.Context, p string, opts Options) (*Jar, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	// The jar keeps the file for later constant-pool reads; the caller closes it with Close.
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a folder, not a jar", p)
	}
	j, err := Index(ctx, f, fi.Size(), p, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	j.closer = f
	return j, nil
}

// Close releases the file of a jar opened by IndexFile.
func (j *Jar) Close() error {
	if j.closer != nil {
		return j.closer.Close()
	}
	return nil
}

// Index reads the central directory of the jar in r and the few entries that describe it
// (manifest, pom.properties, library.properties), and, when asked, every class's version.
func Index(ctx context.Context, r io.ReaderAt, size int64, name string, opts Options) (*Jar, error) {
	a, err := OpenArchive(r, size, name, opts.Limits, ctx.Err)
	if err != nil {
		return nil, err
	}
	j := &Jar{Path: name, Size: size, Archive: a, Entries: len(a.Entries)}
	for i := range a.Entries {
		e := &a.Entries[i]
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		n := e.Name
		if e.IsDir() {
			continue
		}
		switch {
		case strings.HasSuffix(n, ".class"):
			if strings.HasSuffix(n, "module-info.class") || strings.HasSuffix(n, "package-info.class") {
				continue
			}
			c := Class{Entry: i, Size: e.UncompressedSize, CRC32: e.CRC32}
			bin := strings.TrimSuffix(n, ".class")
			if rest, ok := strings.CutPrefix(bin, "META-INF/versions/"); ok {
				v, after, ok := strings.Cut(rest, "/")
				rel, err := strconv.Atoi(v)
				if !ok || err != nil || rel < 9 {
					continue // not a valid versioned entry: Java ignores it
				}
				c.Release, bin = rel, after
			} else if strings.HasPrefix(bin, "META-INF/") {
				continue
			}
			c.Name = strings.ReplaceAll(bin, "/", ".")
			j.Classes = append(j.Classes, c)
		case strings.HasSuffix(n, ".jar") || strings.HasSuffix(n, ".zip"):
			j.Nested = append(j.Nested, n)
		case strings.HasPrefix(n, "META-INF/") && strings.Count(n, "/") == 1 && isSignatureFile(n):
			j.Signatures = append(j.Signatures, n)
		case n == "META-INF/MANIFEST.MF":
			if e.UncompressedSize <= 1<<20 {
				if j.Manifest, err = a.ReadAll(e); err != nil {
					return nil, err
				}
				j.MultiRelease = manifestValue(j.Manifest, "Multi-Release") == "true"
			}
		case strings.HasPrefix(n, "META-INF/maven/") && strings.HasSuffix(n, "/pom.properties") && e.UncompressedSize <= 64<<10:
			b, err := a.ReadAll(e)
			if err != nil {
				return nil, err
			}
			art := parsePomProperties(b)
			if art.ArtifactID == "" { // fall back to the path: META-INF/maven/G/A/pom.properties
				if parts := strings.Split(n, "/"); len(parts) == 5 {
					art.GroupID, art.ArtifactID = parts[2], parts[3]
				}
			}
			j.Artifacts = append(j.Artifacts, art)
		case strings.HasPrefix(n, "META-INF/services/") && strings.Count(n, "/") == 2:
			j.Services = append(j.Services, path.Base(n))
		case n == "library.properties" && e.UncompressedSize <= 64<<10:
			b, err := a.ReadAll(e)
			if err != nil {
				return nil, err
			}
			j.ScalaVersion = propertiesValue(b, "version.number")
		}
	}
	if opts.ClassVersions {
		if err := j.readVersions(ctx); err != nil {
			return nil, err
		}
	}
	sort.Slice(j.Artifacts, func(x, y int) bool {
		return j.Artifacts[x].GroupID+":"+j.Artifacts[x].ArtifactID < j.Artifacts[y].GroupID+":"+j.Artifacts[y].ArtifactID
	})
	return j, nil
}

// readVersions reads every class's major version, on up to GOMAXPROCS (at most 4) goroutines
// with a reader each (one pread and a few decoded symbols per class).
func (j *Jar) readVersions(ctx context.Context) error {
	workers := runtime.GOMAXPROCS(0)
	if workers > 4 {
		workers = 4
	}
	if len(j.Classes) < 2048 {
		workers = 1
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			// One read holds what a class header inflates from: the block header, its Huffman
			// tables and the first symbols.
			br := bufio.NewReaderSize(nil, 1024)
			var head [8]byte
			for i := w; i < len(j.Classes); i += workers {
				if i%1024 < workers {
					if err := ctx.Err(); err != nil {
						errs[w] = err
						return
					}
				}
				c := &j.Classes[i]
				h, err := j.Archive.readHeader(&j.Archive.Entries[c.Entry], head[:], br)
				if err != nil {
					errs[w] = err
					return
				}
				c.Major = h.Major
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ClassRefs parses the constant pool of c and calls visit with each class name it references
// (internal form with slashes).
func (j *Jar) ClassRefs(c *Class, visit func([]byte)) error {
	e := &j.Archive.Entries[c.Entry]
	r, err := j.Archive.Open(e)
	if err != nil {
		return err
	}
	defer r.Close()
	if j.Archive.cp == nil {
		j.Archive.cp = newCPParser()
	}
	if _, err := j.Archive.cp.parse(r, e.UncompressedSize, visit); err != nil {
		var ze *Error
		if errors.As(err, &ze) {
			return err
		}
		return &Error{Archive: j.Path, Offset: -1, Entry: e.Name, Msg: "malformed class file", Err: err}
	}
	// Read the rest so that the size and CRC-32 checks cover the whole entry.
	_, err = io.Copy(io.Discard, r)
	return err
}

func isSignatureFile(n string) bool {
	for _, ext := range []string{".SF", ".RSA", ".DSA", ".EC"} {
		if strings.HasSuffix(strings.ToUpper(n), ext) {
			return true
		}
	}
	return false
}

// manifestValue returns a main-section attribute of a manifest (continuation lines joined).
func manifestValue(m []byte, key string) string {
	var cur strings.Builder
	flush := func() string {
		k, v, ok := strings.Cut(cur.String(), ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.TrimSpace(v)
		}
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(m))
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, " ") {
			cur.WriteString(line[1:])
			continue
		}
		if v := flush(); v != "" {
			return v
		}
		cur.Reset()
		if line == "" {
			return "" // end of the main section
		}
		cur.WriteString(line)
	}
	return flush()
}

func parsePomProperties(b []byte) Artifact {
	return Artifact{GroupID: propertiesValue(b, "groupId"), ArtifactID: propertiesValue(b, "artifactId"), Version: propertiesValue(b, "version")}
}

// propertiesValue reads key=value (or key: value) from a Java properties file, simply.
func propertiesValue(b []byte, key string) string {
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			continue
		}
		if strings.TrimSpace(line[:i]) == key {
			return strings.TrimSpace(line[i+1:])
		}
	}
	return ""
}
