package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestStatFileLocal: StatFile keeps Open's allowlist (lexical, then through symlinks) and looks
// for no _metadata in a folder.
func TestStatFileLocal(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "allowed")
	for p, size := range map[string]int{"allowed/sp/a": 5, "secret/b": 3} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "secret", "b"), filepath.Join(allowed, "sp", "escape")); err != nil {
		t.Fatal(err)
	}
	o := newOpener(t, Config{Allow: []string{allowed}})
	for _, tc := range []struct {
		name, uri string
		size      int64
		kind      Kind
		outside   bool
	}{
		{"path", filepath.Join(allowed, "sp", "a"), 5, 0, false},
		{"Flink's file:/ form", "file:" + filepath.Join(allowed, "sp", "a"), 5, 0, false},
		{"file:///", "file://" + filepath.Join(allowed, "sp", "a"), 5, 0, false},
		{"missing", filepath.Join(allowed, "sp", "gone"), 0, NotFound, false},
		{"a folder is not a file", filepath.Join(allowed, "sp"), 0, NotFound, false},
		{"outside", filepath.Join(root, "secret", "b"), 0, PermissionDenied, true},
		{"outside and missing: no existence leak", filepath.Join(root, "secret", "nope"), 0, PermissionDenied, true},
		{"symlink out of the folder", filepath.Join(allowed, "sp", "escape"), 0, PermissionDenied, true},
		{"dot-dot", filepath.Join(allowed, "sp") + "/../sp/a", 0, PermissionDenied, true},
		{"http", "https://example.com/a", 0, Invalid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := o.StatFile(context.Background(), tc.uri)
			if tc.kind == 0 {
				if err != nil || a.Size != tc.size {
					t.Fatalf("StatFile = %+v, %v; want size %d", a, err, tc.size)
				}
				return
			}
			var se *Error
			if !errors.As(err, &se) || se.Kind != tc.kind || errors.Is(err, ErrOutsideAllowlist) != tc.outside {
				t.Fatalf("err = %v, want %v (outside the allowlist: %v)", err, tc.kind, tc.outside)
			}
		})
	}
	if err := o.ListFolder(context.Background(), allowed, func(string, int64) bool { return true }); !errors.Is(err, ErrInvalid) {
		t.Errorf("ListFolder of a local folder: %v, want Invalid (stat local files one by one)", err)
	}
}
