package fold

import (
	"strings"
	"testing"
)

// TestKeyIsEqualFold compares every pair of a set of strings chosen to hit EqualFold's corners:
// ASCII case, runes folding to ASCII (KELVIN SIGN, LONG S), orbits of three (Σ σ ς), invalid
// UTF-8 against U+FFFD, and lengths that differ in bytes but not in runes.
func TestKeyIsEqualFold(t *testing.T) {
	strs := []string{"", "a", "A", "0d9ffb4f280d028d86dadba01ac205d7", "0D9FFB4F280D028D86DADBA01AC205D7", "0d9FFb4f280d028d86dadba01ac205d8",
		"k", "K", "\u212a", "s", "S", "\u017f", "Σ", "σ", "ς", "ß", "ẞ", "ss", "\xff", "\ufffd", "\xff\xfe", "\ufffd\ufffd", "i", "İ", "ı",
		"op-1", "OP-1", "op-\u212a", "a\xffb", "A\ufffdB", "ǅ", "ǆ", "Ǆ"}
	for _, s := range strs {
		for _, u := range strs {
			if got, want := Key(s) == Key(u), strings.EqualFold(s, u); got != want {
				t.Errorf("Key(%q) == Key(%q) is %v; EqualFold says %v", s, u, got, want)
			}
		}
	}
}
