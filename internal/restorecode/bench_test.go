package restorecode

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// BenchmarkAnalyzeJar analyses a real library jar (Debian's Guava: 2,000 classes, no operators):
// the cost of reading and screening classes.
func BenchmarkAnalyzeJar(b *testing.B) {
	const jar = "/usr/share/java/guava.jar"
	st, err := os.Stat(jar)
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		rep, err := Analyze(context.Background(), []Input{{Path: jar}}, Options{})
		if err != nil || len(rep.Errors) > 0 {
			b.Fatal(err, rep.Errors)
		}
	}
}

// BenchmarkAnalyzeOperator analyses the CompactLike operator alone: the cost of one root.
func BenchmarkAnalyzeOperator(b *testing.B) {
	class, err := os.ReadFile("testdata/example/CompactLike.class")
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Path: "mem", Open: func(ctx context.Context, visit func(string, []byte) error) error {
		return visit("ops/CompactLike.class", class)
	}}
	b.SetBytes(int64(len(class)))
	for b.Loop() {
		if _, err := Analyze(context.Background(), []Input{in}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Generated-jar shape: the performance target (item 6).
const (
	genClasses   = 30000
	genOperators = 2000
	genPad       = 4600 // bytes of padding attribute per class: ~3.4 KB compressed, a ~100 MB jar
)

// BenchmarkAnalyzeGenerated analyses a generated jar of 30,000 classes (~100 MB), 2,000 of them
// stateful operators (copies of CompactLike under other names) and 28,000 that the screen must
// read and drop (the same class with its state words renamed). Every class carries a padding
// attribute of bytes as compressible as real bytecode (3 bits of entropy a byte), so the jar
// has the size of a real 100 MB job jar. bench/analyze.sh measures its peak RSS in a child
// process (BenchmarkAnalyzeJarFile).
func BenchmarkAnalyzeGenerated(b *testing.B) {
	jar := filepath.Join(b.TempDir(), "gen.jar")
	if err := writeGeneratedJar(jar); err != nil {
		b.Fatal(err)
	}
	benchAnalyzeJar(b, jar, genOperators)
}

// BenchmarkAnalyzeJarFile analyses the jar named by RESTORECODE_BENCH_JAR (written beforehand by
// TestWriteGeneratedJar), so that a child process's peak RSS is the analysis's alone.
func BenchmarkAnalyzeJarFile(b *testing.B) {
	jar := os.Getenv("RESTORECODE_BENCH_JAR")
	if jar == "" {
		b.Skip("set RESTORECODE_BENCH_JAR to a jar (TestWriteGeneratedJar writes one)")
	}
	benchAnalyzeJar(b, jar, -1)
}

// TestWriteGeneratedJar writes the generated jar to RESTORECODE_GEN_JAR (skipped when unset).
func TestWriteGeneratedJar(t *testing.T) {
	p := os.Getenv("RESTORECODE_GEN_JAR")
	if p == "" {
		t.Skip("set RESTORECODE_GEN_JAR to write the generated benchmark jar there")
	}
	if err := writeGeneratedJar(p); err != nil {
		t.Fatal(err)
	}
}

func benchAnalyzeJar(b *testing.B, jar string, wantClasses int) {
	st, err := os.Stat(jar)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		rep, err := Analyze(context.Background(), []Input{{Path: jar}}, Options{})
		if err != nil || (wantClasses >= 0 && len(rep.Classes) != wantClasses) {
			b.Fatalf("%v: %d classes, errors %v", err, len(rep.Classes), rep.Errors[:min(3, len(rep.Errors))])
		}
		b.ReportMetric(float64(len(rep.Classes)), "operators")
	}
}

// writeGeneratedJar writes the benchmark jar (deterministic: a fixed seed).
func writeGeneratedJar(p string) error {
	class, err := os.ReadFile("testdata/example/CompactLike.class")
	if err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	rng := rand.New(rand.NewPCG(26, 6))
	pad := make([]byte, genPad)
	for i := 0; i < genClasses; i++ {
		name := fmt.Sprintf("C%06dLike", i) // as long as "CompactLike": the pool lengths stay right
		c := bytes.ReplaceAll(class, []byte("CompactLike"), []byte(name))
		if i >= genOperators {
			for _, w := range screenWords {
				c = bytes.ReplaceAll(c, w, bytes.Repeat([]byte("x"), len(w)))
			}
		}
		for j := range pad {
			pad[j] = byte(rng.IntN(8)) + 'a'
		}
		if c, err = padClass(c, pad); err != nil {
			return err
		}
		w, err := zw.Create("ops/" + name + ".class")
		if err != nil {
			return err
		}
		if _, err := w.Write(c); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// padClass appends a class attribute the reader skips (named "Code", which only a method's
// attributes give a meaning) holding pad.
func padClass(c, pad []byte) ([]byte, error) {
	cls, err := classfile.Parse(c)
	if err != nil {
		return nil, err
	}
	nameIdx := -1
	for i := range cls.Pool {
		if s, ok := cls.Pool.Utf8(uint16(i)); ok && s == "Code" {
			nameIdx = i
		}
	}
	at, err := classAttributesAt(c)
	if err != nil || nameIdx < 0 {
		return nil, fmt.Errorf("padClass: attributes at %d, Code at %d: %v", at, nameIdx, err)
	}
	out := append([]byte{}, c...)
	binary.BigEndian.PutUint16(out[at:], binary.BigEndian.Uint16(c[at:])+1)
	out = binary.BigEndian.AppendUint16(out, uint16(nameIdx))
	out = binary.BigEndian.AppendUint32(out, uint32(len(pad)))
	return append(out, pad...), nil
}

// classAttributesAt walks a well-formed class file to its class attributes_count.
func classAttributesAt(c []byte) (int, error) {
	u2 := func(o int) int { return int(binary.BigEndian.Uint16(c[o:])) }
	n, off := u2(8), 10
	for i := 1; i < n; i++ {
		switch tag := c[off]; tag {
		case 1:
			off += 3 + u2(off+1)
		case 5, 6:
			off, i = off+9, i+1
		case 7, 8, 16, 19, 20:
			off += 3
		case 15:
			off += 4
		case 3, 4, 9, 10, 11, 12, 17, 18:
			off += 5
		default:
			return 0, fmt.Errorf("constant tag %d at %d", tag, off)
		}
	}
	off += 6
	off += 2 + 2*u2(off)     // interfaces
	for k := 0; k < 2; k++ { // fields, methods
		members := u2(off)
		off += 2
		for m := 0; m < members; m++ {
			attrs := u2(off + 6)
			off += 8
			for a := 0; a < attrs; a++ {
				off += 6 + int(binary.BigEndian.Uint32(c[off+2:]))
			}
		}
	}
	return off, nil
}
