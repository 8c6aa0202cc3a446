package jarindex

import (
	"bufio"
	"bytes"
	"compress/flate"
	"io"
	"math/rand/v2"
	"testing"
)

func compress(t testing.TB, b []byte, level int) []byte {
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestInflatePrefix: the bounded inflater gives the same first bytes as compress/flate for
// stored, fixed and dynamic blocks and back-references into the prefix itself.
func TestInflatePrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 5000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	text := bytes.Repeat([]byte("\xca\xfe\xba\xbe\x00\x00\x00\x34constant pool "), 200)
	for _, tc := range []struct {
		name  string
		data  []byte
		level int
	}{
		{"stored", random, flate.NoCompression},
		{"random huffman", random, flate.BestSpeed},
		{"text best", text, flate.BestCompression},
		{"text fast", text, flate.BestSpeed},
		{"huffman only", text, flate.HuffmanOnly},
		{"repeated byte", bytes.Repeat([]byte{7}, 3000), flate.DefaultCompression},
		{"short", []byte("abc"), flate.DefaultCompression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := compress(t, tc.data, tc.level)
			for _, n := range []int{1, 8, 64, 3000} {
				out := make([]byte, n)
				got, err := inflatePrefix(bufio.NewReader(bytes.NewReader(z)), out)
				if err != nil {
					t.Fatalf("n=%d: %v", n, err)
				}
				want := min(n, len(tc.data))
				if got != want || !bytes.Equal(out[:got], tc.data[:want]) {
					t.Fatalf("n=%d: got %d bytes %x, want %x", n, got, out[:got], tc.data[:want])
				}
			}
		})
	}
	if _, err := inflatePrefix(bufio.NewReader(bytes.NewReader([]byte{0xff, 0xff})), make([]byte, 8)); err == nil {
		t.Fatal("block type 3 accepted")
	}
}

// FuzzInflatePrefix: whenever compress/flate decodes the first bytes of a stream, the bounded
// inflater decodes the same bytes; on any input it returns, never panics.
func FuzzInflatePrefix(f *testing.F) {
	f.Add(compress(f, []byte("\xca\xfe\xba\xbe\x00\x00\x00\x3dhello hello hello"), flate.BestCompression))
	f.Add(compress(f, []byte("12345678"), flate.NoCompression))
	f.Add(compress(f, bytes.Repeat([]byte("ab"), 100), flate.HuffmanOnly))
	f.Fuzz(func(t *testing.T, z []byte) {
		mine := make([]byte, 8)
		n, err := inflatePrefix(bufio.NewReader(bytes.NewReader(z)), mine)
		ref := make([]byte, 8)
		m, rerr := io.ReadFull(flate.NewReader(bytes.NewReader(z)), ref)
		if rerr == nil {
			if err != nil || n != 8 || !bytes.Equal(mine, ref) {
				t.Fatalf("flate gives %x, bounded inflater %x (%d, %v)", ref, mine[:n], n, err)
			}
		}
		_ = m
	})
}
