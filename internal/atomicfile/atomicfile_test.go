package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	errWrite := errors.New("write failed")
	tests := []struct {
		name    string
		old     string // "" = no file before
		write   func(io.Writer) error
		wantErr error
		want    string // content after
	}{
		{"new file", "", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, nil, "new"},
		{"replaces", "old", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, nil, "new"},
		{"failed write keeps the old file", "old", func(w io.Writer) error { io.WriteString(w, "half"); return errWrite }, errWrite, "old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.txt")
			if tt.old != "" {
				if err := os.WriteFile(path, []byte(tt.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(path, tt.write); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Write: %v, want %v", err, tt.wantErr)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("content %q, want %q", got, tt.want)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				t.Errorf("folder holds %d entries, want only out.txt (temporary file left behind?)", len(entries))
			}
			if tt.wantErr == nil {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o644 {
					t.Errorf("mode %v, want 0644", fi.Mode().Perm())
				}
			}
		})
	}
}

func TestWriteFileMissingFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no-such-folder", "out.txt")
	if err := WriteFile(path, []byte("x")); err == nil {
		t.Fatal("WriteFile into a missing folder: no error")
	}
}
