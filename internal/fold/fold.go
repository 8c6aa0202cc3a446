// Package fold gives strings a key under which two strings are equal exactly when
// strings.EqualFold says they are, so that a map can answer what a scan with EqualFold would
// (IDs that Flink writes in hex and users in any case).
package fold

import (
	"strings"
	"unicode"
)

// Key maps every rune of s to the smallest rune of its simple case-folding orbit (the orbit
// strings.EqualFold compares by): Key(s) == Key(t) exactly when strings.EqualFold(s, t). An
// invalid UTF-8 byte becomes U+FFFD, which EqualFold also takes it for.
func Key(s string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		return m
	}, s)
}
