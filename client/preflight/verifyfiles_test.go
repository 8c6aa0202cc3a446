package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/source/s3test"
)

// s3Savepoint writes a synthetic savepoint of n operators (one state file each) and uploads it
// to s3://ckpt/savepoints/<name>/ on gw. It returns the savepoint's URI (with the gateway's
// query options) and the state files' names, sorted.
func s3Savepoint(tb testing.TB, gw *s3test.Gateway, name string, n int) (string, []string) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), name)
	names, err := scenarios.WriteSyntheticFolder(dir, scenarios.SyntheticOperators(n))
	if err != nil {
		tb.Fatal(err)
	}
	gw.PutFolder(tb, "ckpt", "savepoints/"+name+"/", dir)
	uri := strings.Replace(gw.BucketURL("ckpt"), "s3://ckpt?", "s3://ckpt/savepoints/"+name+"?", 1)
	return uri, names
}

// damage deletes the first three state files and truncates the fourth to one byte.
func damage(tb testing.TB, gw *s3test.Gateway, name string, names []string) {
	tb.Helper()
	for _, f := range names[:3] {
		gw.Delete(tb, "ckpt", "savepoints/"+name+"/"+f)
	}
	gw.Put(tb, "ckpt", "savepoints/"+name+"/"+names[3], bytes.NewReader([]byte{0}))
}

// TestVerifyFilesS3 runs check and decide with --verify-files against a savepoint folder on a
// real S3 server (versitygw), in-process and through preflightd: intact, then with three state
// files deleted and one truncated.
func TestVerifyFilesS3(t *testing.T) {
	gw := s3test.Start(t)
	gw.CreateBucket(t, "ckpt")
	intact, _ := s3Savepoint(t, gw, "sp-intact", 20)
	damaged, names := s3Savepoint(t, gw, "sp-damaged", 20)
	damage(t, gw, "sp-damaged", names)
	// Fewer files than make a folder worth listing: each is statted (HEAD).
	small, smallNames := s3Savepoint(t, gw, "sp-small", 8)
	damage(t, gw, "sp-small", smallNames)
	addr := startServer(t, gw.BucketURL("ckpt"))
	reasons := []string{"are missing: `s3://ckpt/savepoints/sp-damaged/" + names[0] + "`", names[1], names[2],
		"is not the size recorded: `s3://ckpt/savepoints/sp-damaged/" + names[3] + "` (recorded 240 bytes, found 1)"}
	for _, c := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"check intact", []string{"check", intact, "--verify-files"}, exitAllow, []string{"state files: 20 files verified", "VERDICT: ALLOW"}},
		{"check damaged", []string{"check", damaged, "--verify-files"}, exitDeny, append([]string{"state files: 4 of 20 files missing or wrong (16 verified)", "VERDICT: DENY", "PF210"}, reasons...)},
		{"check damaged, files statted one by one", []string{"check", small, "--verify-files"}, exitDeny, []string{"4 of 8 files missing or wrong (4 verified)",
			"3 of 8 state files the checkpoint references are missing: `s3://ckpt/savepoints/sp-small/" + smallNames[0] + "`",
			"`s3://ckpt/savepoints/sp-small/" + smallNames[3] + "` (recorded 240 bytes, found 1)"}},
		{"check damaged, verification off", []string{"check", damaged}, exitAllow, []string{"VERDICT: ALLOW"}},
		{"decide intact", []string{"decide", intact, "--set", "op-1=1"}, exitAllow, []string{"DECISION: APPROVE", "state files: 20 files verified"}},
		{"decide damaged", []string{"decide", damaged, "--set", "op-1=1"}, exitDeny, []string{"DECISION: VETO", "missing: s3://ckpt/savepoints/sp-damaged/" + names[0],
			"wrong size: s3://ckpt/savepoints/sp-damaged/" + names[3] + " (240 bytes recorded, 1 found)", "PF210"}},
		{"decide damaged, verification off", []string{"decide", damaged, "--set", "op-1=1", "--verify-files=false"}, exitAllow, []string{"DECISION: APPROVE"}},
		{"server check damaged", []string{"check", "s3://ckpt/savepoints/sp-damaged", "--verify-files", "--server", addr, "--insecure"}, exitDeny, reasons},
		{"server decide damaged", []string{"decide", "s3://ckpt/savepoints/sp-damaged", "--set", "op-1=1", "--server", addr, "--insecure"}, exitDeny, []string{"DECISION: VETO", "PF210"}},
		{"server decide intact", []string{"decide", "s3://ckpt/savepoints/sp-intact", "--set", "op-1=1", "--server", addr, "--insecure"}, exitAllow, []string{"state files: 20 files verified"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s\n%s", code, c.wantCode, stderr, stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

// BenchmarkVerifyFilesS3 is the done-when of issue #30: `check --verify-files` of a savepoint
// folder on the S3 test server with 10,000 state files, three deleted and one truncated, names
// the four with their reasons (one op is the whole CLI run: read _metadata, check, list and stat
// every file); decide vetoes it; intact, it verifies all 10,000. bench/README.md has the figure.
func BenchmarkVerifyFilesS3(b *testing.B) {
	gw := s3test.Start(b)
	gw.CreateBucket(b, "ckpt")
	const n = 10000
	uri, names := s3Savepoint(b, gw, "sp-10000", n)
	damage(b, gw, "sp-10000", names)
	run := func(b *testing.B, want []string, args ...string) {
		b.Helper()
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				b.Fatalf("exit %d, output lacks %q; stderr %s", code, w, errb.String())
			}
		}
	}
	b.Run("damaged", func(b *testing.B) {
		want := []string{"4 of 10,000 files missing or wrong", names[0], names[1], names[2], names[3] + "` (recorded 240 bytes, found 1)"}
		start := time.Now()
		for b.Loop() {
			run(b, want, "check", uri, "--verify-files", "-o", "markdown")
		}
		b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "files/s")
		run(b, []string{"DECISION: VETO", "PF210"}, "decide", uri, "--set", "op-1=1")
	})
	for _, f := range names[:4] {
		gw.Put(b, "ckpt", "savepoints/sp-10000/"+f, bytes.NewReader(make([]byte, 240)))
	}
	b.Run("intact", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			run(b, []string{"10,000 files verified", "**ALLOW**"}, "check", uri, "--verify-files", "-o", "markdown")
		}
		b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "files/s")
	})
}

// TestVerifyFilesLatest: --latest --verify-files verifies the chosen snapshot's state files,
// in-process and with a local folder uploaded to a server.
func TestVerifyFilesLatest(t *testing.T) {
	root := t.TempDir()
	if _, err := scenarios.WriteSyntheticFolder(filepath.Join(root, "chk-5"), scenarios.SyntheticOperators(4)); err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, root)
	for _, extra := range [][]string{nil, {"--server", addr, "--insecure"}} {
		code, out, stderr := runCLI(t, append([]string{"check", "--latest", root, "--verify-files"}, extra...)...)
		if code != exitAllow || !strings.Contains(out, "state files: 4 files verified") {
			t.Errorf("%v: exit %d\n%s\n%s", extra, code, out, stderr)
		}
	}
}
