package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	code, stdout, stderr := runCLI(t, "--version")
	if code != exitAllow {
		t.Fatalf("exit code %d, stderr %q", code, stderr)
	}
	if !strings.HasPrefix(stdout, "preflight ") || !strings.Contains(stdout, "revision ") || !strings.Contains(stdout, runtime.Version()) {
		t.Fatalf("--version printed %q; want the program, module version, revision and %s", stdout, runtime.Version())
	}
}
