package main

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// captureStdout runs f with os.Stdout redirected, since run prints the bound addresses and the
// version there as the process would.
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	ferr := f()
	os.Stdout = old
	w.Close()
	return <-done, ferr
}

func TestVersionFlag(t *testing.T) {
	out, err := captureStdout(t, func() error { return run([]string{"--version"}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "preflightd ") || !strings.Contains(out, "revision ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("--version printed %q", out)
	}
}
