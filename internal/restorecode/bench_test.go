package restorecode

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
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

// BenchmarkAnalyzeGenerated analyses a generated jar of 30,000 classes, 2,000 of them operators
// (copies of CompactLike under other names) and 28,000 that only pass the screen (the same
// class with its state words renamed): the shape of the performance target, smaller
// classes.
func BenchmarkAnalyzeGenerated(b *testing.B) {
	class, err := os.ReadFile("testdata/example/CompactLike.class")
	if err != nil {
		b.Fatal(err)
	}
	entries := map[string][]byte{}
	for i := 0; i < 30000; i++ {
		name := fmt.Sprintf("C%06dLike", i) // as long as "CompactLike": the pool lengths stay right
		c := bytes.ReplaceAll(class, []byte("CompactLike"), []byte(name))
		if i >= 2000 {
			for _, w := range screenWords {
				c = bytes.ReplaceAll(c, w, bytes.Repeat([]byte("x"), len(w)))
			}
		}
		entries["ops/"+name+".class"] = c
	}
	jar := writeJarB(b, entries)
	st, _ := os.Stat(jar)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for b.Loop() {
		rep, err := Analyze(context.Background(), []Input{{Path: jar}}, Options{})
		if err != nil || len(rep.Classes) != 2000 {
			b.Fatalf("%v: %d classes, errors %v", err, len(rep.Classes), rep.Errors[:min(3, len(rep.Errors))])
		}
	}
}

func writeJarB(b *testing.B, entries map[string][]byte) string {
	p := filepath.Join(b.TempDir(), "gen.jar")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, data := range entries {
		w, _ := zw.Create(name)
		w.Write(data)
	}
	zw.Close()
	f.Close()
	return p
}
