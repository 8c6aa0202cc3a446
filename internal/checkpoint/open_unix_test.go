//go:build unix

package checkpoint

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLoadFileFIFO: opening a FIFO nobody writes to fails at once as not a regular file.
func TestLoadFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := NewDecoder().ReadLayoutFile(context.Background(), fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO decoded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
}
