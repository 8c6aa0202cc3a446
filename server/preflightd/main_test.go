package main

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/admission"
)

// captureStdout runs f with os.Stdout redirected, since run prints the bound addresses and the
// version there as the process would.
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	return capture(t, &os.Stdout, f)
}

// capture runs f with *file (os.Stdout or os.Stderr) redirected to a pipe and returns what f
// wrote there.
func capture(t *testing.T, file **os.File, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := *file
	*file = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	ferr := f()
	*file = old
	w.Close()
	return <-done, ferr
}

// TestHelpFlagNames: the usage names flags --name, as the README and the config file do.
func TestHelpFlagNames(t *testing.T) {
	out, err := capture(t, &os.Stderr, func() error { return run([]string{"--help"}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\n  --allow value\n") || strings.Contains(out, "\n  -allow") {
		t.Fatalf("--help does not name --allow:\n%s", out)
	}
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

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/preflightd.yaml"
	if err := os.WriteFile(bad, []byte("grpc-addr: 127.0.0.1:0\nmax-upload-bytes: plenty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--config", bad}, "preflightd.yaml:2: max-upload-bytes: invalid size"},
		{[]string{"--max-inline-bytes", "8 parsecs"}, "invalid size"},
		{[]string{"--config", dir + "/missing.yaml"}, "missing.yaml"},
	} {
		if err := run(tt.args); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("run(%q) = %v, want an error containing %q", tt.args, err, tt.wantErr)
		}
	}
}

func TestAdmissionPolicyFlags(t *testing.T) {
	tests := []struct {
		policy, template string
		timeout          time.Duration
		closed           bool
		err              string
	}{
		{"open", admission.DefaultRESTTemplate, time.Second, false, ""},
		{"closed", "https://{name}.{namespace}.svc:{port}", time.Second, true, ""},
		{"shut", admission.DefaultRESTTemplate, time.Second, false, "--admission-failure-policy"},
		{"open", admission.DefaultRESTTemplate, 0, false, "--admission-timeout"},
		{"open", "{name}:{port}", time.Second, false, "--admission-flink-rest"},
	}
	for _, tt := range tests {
		c := admission.Config{RESTTemplate: tt.template, Timeout: tt.timeout}
		err := admissionPolicyFlags(&c, tt.policy)
		if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) || c.FailClosed != tt.closed {
			t.Errorf("%s %s %v: %v, closed %v", tt.policy, tt.template, tt.timeout, err, c.FailClosed)
		}
	}
}
