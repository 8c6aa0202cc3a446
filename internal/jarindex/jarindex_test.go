package jarindex

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/jarindex/jartest"
)

func writeJar(t *testing.T, j jartest.Jar) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.jar")
	if err := jartest.WriteJar(p, j); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIndexRealJar(t *testing.T) {
	j := jartest.Jar{}.AddClasses(
		jartest.Class{Name: "com.example.Job", Refs: []string{"org.apache.kafka.clients.producer.ProducerRecord"}},
		jartest.Class{Name: "com.example.New", Major: 61},
	).AddPom("org.apache.flink", "flink-cep_2.12", "1.9.1")
	j["META-INF/versions/11/com/example/Job.class"] = jartest.ClassFile(jartest.Class{Name: "com.example.Job", Major: 55})
	j["lib/nested.jar"] = []byte("PK")
	j["META-INF/SIGNER.SF"] = []byte("Signature-Version: 1.0\n")
	j["META-INF/services/org.apache.flink.core.fs.FileSystemFactory"] = []byte("x\n")
	j["library.properties"] = []byte("version.number=2.12.7\n")
	j["META-INF/MANIFEST.MF"] = []byte("Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n")
	jar, err := IndexFile(context.Background(), writeJar(t, j), Options{ClassVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer jar.Close()
	got := map[string]Class{}
	for _, c := range jar.Classes {
		key := c.Name
		if c.Release > 0 {
			key += "@" + string(rune('0'+c.Release-10)) // "@1" for release 11
		}
		got[key] = c
	}
	if c := got["com.example.Job"]; c.Major != 52 || c.Size == 0 {
		t.Errorf("Job: %+v", c)
	}
	if c := got["com.example.New"]; c.Major != 61 {
		t.Errorf("New: %+v", c)
	}
	if c := got["com.example.Job@1"]; c.Release != 11 || c.Major != 55 {
		t.Errorf("versioned Job: %+v", c)
	}
	if !jar.MultiRelease || len(jar.Nested) != 1 || len(jar.Signatures) != 1 || jar.ScalaVersion != "2.12.7" ||
		len(jar.Services) != 1 || len(jar.Artifacts) != 1 || jar.Artifacts[0].Version != "1.9.1" {
		t.Errorf("jar facts: %+v", jar)
	}
	var refs []string
	c := got["com.example.Job"]
	if err := jar.ClassRefs(&c, func(b []byte) { refs = append(refs, string(b)) }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(refs)
	want := "com/example/Job java/lang/Object org/apache/kafka/clients/producer/ProducerRecord"
	if strings.Join(refs, " ") != want {
		t.Errorf("refs %v, want %s", refs, want)
	}
}

func TestDescriptorRefs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"(Ljava/lang/Object;Ljava/lang/Long;)Lorg/apache/kafka/clients/producer/ProducerRecord;", "java/lang/Object java/lang/Long org/apache/kafka/clients/producer/ProducerRecord"},
		{"Ljava/util/List<Lorg/x/Y;>;", "java/util/List org/x/Y"},
		{"[[Lcom/a/B;", "com/a/B"},
		{"hello world", ""},
		{"(IJ)V", ""},
	} {
		var got []string
		descriptorRefs([]byte(tc.in), func(b []byte) { got = append(got, string(b)) })
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %v, want %s", tc.in, got, tc.want)
		}
	}
}

func TestZip64ManyEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 70,000 entries")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	const n = 70_000 // over 65,535: archive/zip writes a zip64 end record
	for i := 0; i < n; i++ {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "p/C" + strconv.Itoa(i) + ".class", Method: zip.Store})
		w.Write(jartest.ClassFile(jartest.Class{Name: "p.C" + strconv.Itoa(i)}))
	}
	zw.Close()
	jar, err := Index(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), "many.jar", Options{ClassVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jar.Classes) != n || jar.Classes[n-1].Major != 52 {
		t.Fatalf("%d classes", len(jar.Classes))
	}
	_, err = Index(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), "many.jar", Options{Limits: Limits{MaxEntries: 1000}})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "declares 70000 entries") {
		t.Fatalf("limit: %v", err)
	}
}

// rawZip writes one entry with the given declared sizes and raw (already compressed) data.
func rawZip(t *testing.T, name string, method uint16, data []byte, crc uint32, usize uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: method, CRC32: crc, CompressedSize64: uint64(len(data)), UncompressedSize64: usize})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	zw.Close()
	return buf.Bytes()
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "x", Method: zip.Deflate})
	w.Write(b)
	zw.Close()
	r, _ := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	off, _ := r.File[0].DataOffset()
	return buf.Bytes()[off : off+int64(r.File[0].CompressedSize64)]
}

func TestHostileArchives(t *testing.T) {
	class := jartest.ClassFile(jartest.Class{Name: "a.B"})
	zeros := make([]byte, 8<<20)
	copy(zeros, class)
	bomb := deflate(zeros) // 8 MiB of mostly zeros in a few KiB
	valid := rawZip(t, "a/B.class", zip.Deflate, deflate(class), crc32.ChecksumIEEE(class), uint64(len(class)))

	// An end record declaring a million entries over a tiny directory.
	million := append([]byte(nil), valid...)
	eocd := bytes.LastIndex(million, []byte{0x50, 0x4b, 0x05, 0x06})
	binary.LittleEndian.PutUint16(million[eocd+8:], 0xFFFE)
	binary.LittleEndian.PutUint16(million[eocd+10:], 0xFFFE)
	corruptCD := append([]byte(nil), valid...)
	cd := bytes.Index(corruptCD, []byte{0x50, 0x4b, 0x01, 0x02})
	corruptCD[cd+1] = 'X'
	badOffset := append([]byte(nil), valid...)
	binary.LittleEndian.PutUint32(badOffset[eocd+16:], 1<<30)
	// Two records, the second one's signature broken: archive/zip stops before it.
	two := twoEntries(t, class)
	secondBroken := append([]byte(nil), two...)
	second := bytes.LastIndex(secondBroken, []byte{0x50, 0x4b, 0x01, 0x02})
	secondBroken[second+1] = 'X'
	// The end record declares one entry of two: the rest of the directory is more than it says.
	fewer := append([]byte(nil), two...)
	eocd2 := bytes.LastIndex(fewer, []byte{0x50, 0x4b, 0x05, 0x06})
	binary.LittleEndian.PutUint16(fewer[eocd2+8:], 1)
	binary.LittleEndian.PutUint16(fewer[eocd2+10:], 1)

	for _, tc := range []struct {
		name  string
		zip   []byte
		limit bool
		want  string
	}{
		{"empty", nil, false, "too short"},
		{"not a zip", bytes.Repeat([]byte("x"), 100), false, "no end of central directory"},
		{"declared size lie", rawZip(t, "a/B.class", zip.Deflate, bomb, 0, uint64(len(class))), true, "the declared size is false"},
		{"inflates past its declared size", rawZip(t, "a/B.class", zip.Deflate, deflate(append(append([]byte(nil), class...), make([]byte, 100)...)), crc32.ChecksumIEEE(class), uint64(len(class))), true, "inflates past its declared size"},
		{"ratio bomb", rawZip(t, "a/B.class", zip.Deflate, bomb, 0, 8<<30), true, "zip bomb"},
		{"zip slip", rawZip(t, "../../etc/evil.class", zip.Store, class, crc32.ChecksumIEEE(class), uint64(len(class))), false, "zip-slip"},
		{"absolute name", rawZip(t, "/etc/evil.class", zip.Store, class, crc32.ChecksumIEEE(class), uint64(len(class))), false, "absolute path"},
		{"million entries", million, false, "declares 65534 entries but its central directory"},
		{"corrupt directory", corruptCD, false, "bad central directory signature"},
		{"directory offset outside", badOffset, false, "does not fit"},
		{"crc mismatch", rawZip(t, "a/B.class", zip.Store, class, 1234, uint64(len(class))), false, "CRC-32 mismatch"},
		{"crc 0 in the directory", rawZip(t, "a/B.class", zip.Store, class, 0, uint64(len(class))), false, "CRC-32 mismatch"},
		{"second record broken", secondBroken, false, "records do not match the 2 its end record declares"},
		{"more records than declared", fewer, false, "records do not match the 1 its end record declares"},
		{"truncated data", rawZip(t, "a/B.class", zip.Store, class[:4], crc32.ChecksumIEEE(class[:4]), 4), false, "class file of 4 bytes"},
		{"not a class", rawZip(t, "a/B.class", zip.Store, []byte("hello world!"), crc32.ChecksumIEEE([]byte("hello world!")), 12), false, "magic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jar, err := Index(context.Background(), bytes.NewReader(tc.zip), int64(len(tc.zip)), "hostile.jar", Options{ClassVersions: true})
			if err == nil {
				// The header read stops after 8 bytes; sizes and CRC are checked when a whole
				// class is read.
				for i := range jar.Classes {
					if err = jar.ClassRefs(&jar.Classes[i], func([]byte) {}); err != nil {
						break
					}
				}
			}
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hostile.jar") {
				t.Fatalf("error %q, want it to contain %q and the jar name", err, tc.want)
			}
			if errors.Is(err, ErrLimit) != tc.limit {
				t.Fatalf("errors.Is(ErrLimit) = %v, want %v", !tc.limit, tc.limit)
			}
		})
	}
}

func TestMillionEntriesDeclaredZip64(t *testing.T) {
	// A zip64 end record declaring a million entries: refused by the entry limit before any
	// allocation.
	var b bytes.Buffer
	rec := make([]byte, 56)
	binary.LittleEndian.PutUint32(rec, eocd64Sig)
	binary.LittleEndian.PutUint64(rec[24:], 1_000_000)
	binary.LittleEndian.PutUint64(rec[32:], 1_000_000)
	binary.LittleEndian.PutUint64(rec[40:], 46_000_000)
	b.Write(rec)
	loc := make([]byte, 20)
	binary.LittleEndian.PutUint32(loc, eocd64LocSig)
	binary.LittleEndian.PutUint64(loc[8:], 0)
	b.Write(loc)
	e := make([]byte, eocdLen)
	binary.LittleEndian.PutUint32(e, eocdSig)
	binary.LittleEndian.PutUint16(e[8:], 0xFFFF)
	binary.LittleEndian.PutUint16(e[10:], 0xFFFF)
	binary.LittleEndian.PutUint32(e[12:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(e[16:], 0xFFFFFFFF)
	b.Write(e)
	_, err := Index(context.Background(), bytes.NewReader(b.Bytes()), int64(b.Len()), "m.jar", Options{})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "declares 1000000 entries; the limit is 500000") {
		t.Fatalf("%v", err)
	}
}

func TestContextCancel(t *testing.T) {
	p := writeJar(t, jartest.Jar{}.AddClasses(jartest.Class{Name: "a.B"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := IndexFile(ctx, p, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func TestEntryReaderBounds(t *testing.T) {
	class := jartest.ClassFile(jartest.Class{Name: "a.B"})
	z := rawZip(t, "a/B.class", zip.Deflate, deflate(class), crc32.ChecksumIEEE(class), uint64(len(class)))
	a, err := OpenArchive(bytes.NewReader(z), int64(len(z)), "b.jar", Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.ReadAll(&a.Entries[0])
	if err != nil || !bytes.Equal(got, class) {
		t.Fatalf("ReadAll: %v", err)
	}
	r, _ := a.Open(&a.Entries[0])
	if n, err := io.Copy(io.Discard, r); err != nil || n != int64(len(class)) {
		t.Fatalf("copy %d %v", n, err)
	}
}

// twoEntries is a jar of two stored classes.
func twoEntries(t *testing.T, class []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"a/B.class", "a/C.class"} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(class)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPrependedData: a jar behind a shell stub (a self-extracting archive) indexes as the jar
// alone does; every offset is shifted by the stub.
func TestPrependedData(t *testing.T) {
	class := jartest.ClassFile(jartest.Class{Name: "a.B", Refs: []string{"c.D"}})
	z := append([]byte("#!/bin/sh\nexec java -jar \"$0\" \"$@\"\n"), twoEntries(t, class)...)
	jar, err := Index(context.Background(), bytes.NewReader(z), int64(len(z)), "stub.jar", Options{ClassVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(jar.Classes) != 2 || jar.Classes[1].Major != 52 {
		t.Fatalf("classes %+v", jar.Classes)
	}
	var refs []string
	if err := jar.ClassRefs(&jar.Classes[0], func(b []byte) { refs = append(refs, string(b)) }); err != nil || !slices.Contains(refs, "c/D") {
		t.Fatalf("refs %v, %v", refs, err)
	}
}
