package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalyzeCatalogOut: the catalog analyze writes makes check deny what --job-jar denies, and
// an existing file is replaced only with --force.
func TestAnalyzeCatalogOut(t *testing.T) {
	const jar, ckpt = "../../testdata/custom-operator/job.jar", "../../testdata/custom-operator/_metadata"
	out := filepath.Join(t.TempDir(), "job-catalog.json")
	if code, _, stderr := runCLI(t, "analyze", jar, "--catalog-out", out); code != exitAllow {
		t.Fatalf("analyze: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "check", ckpt, "--set", "pending-commit-writer=8", "--catalog", out)
	if code != exitDeny || !strings.Contains(stdout, "PF101") || !strings.Contains(stdout, "PendingCommitOperator.initializeState, line 37") {
		t.Fatalf("check --catalog: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "analyze", jar, "--catalog-out", out); code != exitUsage || !strings.Contains(stderr, "--force") {
		t.Errorf("second analyze without --force: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "analyze", jar, "--catalog-out", out, "--force"); code != exitAllow {
		t.Errorf("analyze --force: exit %d: %s", code, stderr)
	}
}

func TestAnalyzeInputErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.jar")
	if err := os.WriteFile(garbage, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, testdata)
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"analyze"}, exitUsage, "name a job jar"},
		{[]string{"analyze", filepath.Join(dir, "missing.jar")}, exitUsage, "missing.jar"},
		{[]string{"analyze", garbage}, exitUsage, "garbage.jar"},
		{[]string{"check", "../../testdata/custom-operator", "--job-jar", garbage}, exitUsage, "garbage.jar"},
		// With --server the server reads the jar: one outside its allowlist is refused, named.
		{[]string{"check", "../../testdata/custom-operator", "--set", "pending-commit-writer=8", "--job-jar", garbage, "--server", addr, "--insecure"}, exitUsage, "options.job_jar_uris[0]: permission denied: " + garbage},
		{[]string{"inspect", "../../testdata/custom-operator", "--catalog", garbage, "--server", addr, "--insecure"}, exitUsage, "--catalog with --server applies to check and decide only"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", tc.args, code, stderr, tc.code, tc.stderr)
		}
	}
}
