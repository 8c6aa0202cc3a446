package restorecode

import (
	"context"
	"os"
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
