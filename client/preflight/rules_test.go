package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRulesCommand(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		code  int
		check func(t *testing.T, stdout, stderr string)
	}{
		{"markdown is docs/rules.md", []string{"rules", "-o", "markdown"}, 0, func(t *testing.T, stdout, _ string) {
			if stdout != string(doc) {
				t.Error("preflight rules -o markdown differs from docs/rules.md")
			}
		}},
		{"text names every rule", []string{"rules"}, 0, func(t *testing.T, stdout, _ string) {
			for _, id := range []string{"PF101", "PF150", "PF190"} {
				if !strings.Contains(stdout, id+" ") {
					t.Errorf("text output lacks %s", id)
				}
			}
		}},
		{"json of selected rules", []string{"rules", "pf110", "PF160", "-o", "json"}, 0, func(t *testing.T, stdout, _ string) {
			var v struct {
				Rules []struct{ ID string } `json:"rules"`
			}
			if err := json.Unmarshal([]byte(stdout), &v); err != nil || len(v.Rules) != 2 || v.Rules[0].ID != "PF110" || v.Rules[1].ID != "PF160" {
				t.Errorf("json = %s (%v)", stdout, err)
			}
		}},
		{"unknown rule is a usage error", []string{"rules", "PF999"}, 2, func(t *testing.T, _, stderr string) {
			if !strings.Contains(stderr, `unknown rule "PF999"`) {
				t.Errorf("stderr = %q", stderr)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			tc.check(t, stdout, stderr)
		})
	}
}
