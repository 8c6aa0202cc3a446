package checkpoint

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func TestMUTF8Vector(t *testing.T) {
	// Java 17: writeUTF("a\u0000é€😀").
	want, _ := hex.DecodeString("000e61c080c3a9e282aceda0bdedb880")
	got, err := appendMUTF8(nil, "a\u0000é€😀")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("appendMUTF8 = % x, %v; want % x", got, err, want)
	}
	s, err := decodeMUTF8(want[2:])
	if err != nil || s != "a\u0000é€😀" {
		t.Fatalf("decodeMUTF8 = %q, %v", s, err)
	}
}

func TestMUTF8RoundTrip(t *testing.T) {
	for _, s := range []string{"", "abc", "\x00", "ü", "日本語", "😀😀", "\uFFFD", strings.Repeat("é", 1000)} {
		b, err := appendMUTF8(nil, s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		got, err := decodeMUTF8(b[2:])
		if err != nil || got != s {
			t.Errorf("%q: round trip gave %q, %v", s, got, err)
		}
	}
	// A lone surrogate survives decoding and encoding.
	lone := []byte{0xED, 0xA0, 0xBD, 'x'}
	s, err := decodeMUTF8(lone)
	if err != nil {
		t.Fatal(err)
	}
	b, err := appendMUTF8(nil, s)
	if err != nil || !bytes.Equal(b[2:], lone) {
		t.Errorf("lone surrogate: % x, %v", b, err)
	}
}

func TestMUTF8Malformed(t *testing.T) {
	for _, b := range [][]byte{
		{0x80}, {0xC3}, {0xC3, 0x41}, {0xE2, 0x82}, {0xE2, 0x41, 0x80}, {0xF0, 0x9F, 0x98, 0x80}, {0xFF},
	} {
		if _, err := decodeMUTF8(b); err == nil {
			t.Errorf("decodeMUTF8(% x) succeeded", b)
		}
	}
}

func TestMUTF8TooLong(t *testing.T) {
	if _, err := appendMUTF8(nil, strings.Repeat("a", 65535)); err != nil {
		t.Errorf("65535 bytes: %v", err)
	}
	if _, err := appendMUTF8(nil, strings.Repeat("a", 65536)); err == nil {
		t.Error("65536 bytes accepted")
	}
	if _, err := appendMUTF8(nil, strings.Repeat("é", 32768)); err == nil {
		t.Error("65536 encoded bytes accepted")
	}
	if _, err := appendMUTF8(nil, "\xff"); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}

// TestIsPlainASCII checks the eight-bytes-at-a-time scan against the byte-by-byte definition:
// a NUL or a byte ≥ 0x80 at every position of every length up to 24, next to each byte value.
func TestIsPlainASCII(t *testing.T) {
	slow := func(b []byte) bool {
		for _, c := range b {
			if c == 0 || c >= 0x80 {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 24; n++ {
		for pos := 0; pos < max(n, 1); pos++ {
			for _, v := range []byte{0x00, 0x01, 0x41, 0x7F, 0x80, 0xC0, 0xFF} {
				for _, fill := range []byte{0x01, 0x20, 0x7F} {
					b := bytes.Repeat([]byte{fill}, n)
					if n > 0 {
						b[pos] = v
					}
					if got, want := isPlainASCII(b), slow(b); got != want {
						t.Fatalf("%x: isPlainASCII %v, want %v", b, got, want)
					}
				}
			}
		}
	}
}
