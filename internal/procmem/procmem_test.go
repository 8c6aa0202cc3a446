package procmem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileBacked(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "statm")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	page := int64(os.Getpagesize())
	for _, tc := range []struct {
		name, statm string
		want        int64
	}{
		{"shared pages", write("7000 6000 5000 100 0 900 0\n"), 5000 * page},
		{"missing", filepath.Join(dir, "none"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(old string) { statm = old }(statm)
			statm = tc.statm
			if got := FileBacked(); got != tc.want {
				t.Errorf("FileBacked() = %d, want %d", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "1 2", "1 2 x", "1 2 -3"} {
		t.Run("malformed "+bad, func(t *testing.T) {
			defer func(old string) { statm = old }(statm)
			statm = write(bad)
			if got := FileBacked(); got != 0 {
				t.Errorf("FileBacked() on %q = %d, want 0", bad, got)
			}
		})
	}
}
