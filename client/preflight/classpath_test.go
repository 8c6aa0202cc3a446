package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/classpath/classpathtest"
	"github.com/flinkpreflight/preflight/internal/jarindex/jartest"
)

func TestClasspathCommand(t *testing.T) {
	home := t.TempDir()
	lib, plugins, err := classpathtest.SeedCluster(home)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seed, err := classpathtest.SeedJobJar(dir)
	if err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(dir, "clean.jar")
	if err := jartest.WriteJar(clean, jartest.Jar{}.AddClasses(jartest.Class{Name: "com.example.Job"})); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.jar")
	os.WriteFile(garbage, []byte("not a zip"), 0o644)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"seed text", []string{"classpath", "--job-jar", seed, "--flink-lib", lib, "--plugins", plugins}, exitDeny,
			[]string{"VERDICT: DENY", "PF301", classpathtest.ProducerRecord, "flink-table-planner", "flink-s3-fs-hadoop", "Fix:"}, ""},
		{"seed via flink-home, markdown", []string{"classpath", "--job-jar", seed, "--flink-home", home, "-o", "markdown"}, exitDeny,
			[]string{"**DENY**", "| ERROR | PF301", "Flink 1.9.1"}, ""},
		{"seed fail-on warning json", []string{"classpath", "--job-jar", seed, "--flink-lib", lib, "-o", "json", "--fail-on", "warning"}, exitDeny,
			[]string{`"verdict": "VERDICT_DENY"`, `"ruleId": "PF303"`}, ""},
		{"clean", []string{"classpath", "--job-jar", clean, "--flink-lib", lib}, exitAllow, []string{"VERDICT: ALLOW", "none"}, ""},
		{"missing jar", []string{"classpath", "--job-jar", filepath.Join(dir, "nope.jar"), "--flink-lib", lib}, exitUsage, nil, "nope.jar"},
		{"not a jar", []string{"classpath", "--job-jar", garbage, "--flink-lib", lib}, exitUsage, nil, "no end of central directory"},
		{"no lib", []string{"classpath", "--job-jar", seed}, exitUsage, nil, "--flink-lib"},
		{"no job jar", []string{"classpath", "--flink-lib", lib}, exitUsage, nil, "--job-jar is required"},
		{"bad output", []string{"classpath", "--job-jar", seed, "--flink-lib", lib, "-o", "yaml"}, exitUsage, nil, "unknown output format"},
		{"bad fail-on", []string{"classpath", "--job-jar", seed, "--flink-lib", lib, "--fail-on", "fatal"}, exitUsage, nil, "fail-on"},
		{"unreachable server", []string{"classpath", "--job-jar", seed, "--flink-lib", lib, "--server", "127.0.0.1:1", "--insecure"}, exitInternal, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderr)
			}
			if strings.Contains(strings.Join(tc.args, " "), "json") {
				var v map[string]any
				if err := json.Unmarshal([]byte(stdout), &v); err != nil {
					t.Errorf("not JSON: %v", err)
				}
			}
		})
	}
}
