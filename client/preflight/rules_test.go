package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinkpreflight/preflight/internal/findings"
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

// TestRuleTextsNameRealFlags: every preflight flag a rule's cause, remedies or catalog text names
// (--name in lower case; Flink's own flags such as --allowNonRestoredState have capitals) exists
// on check, decide, analyze or prune, so a user can follow the advice as printed.
func TestRuleTextsNameRealFlags(t *testing.T) {
	known := map[string]bool{}
	for _, cmd := range []*cobra.Command{newCheckCommand(new(int)), newDecideCommand(new(int)), newAnalyzeCommand(), newPruneCommand()} {
		cmd.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	}
	flagRE := regexp.MustCompile(`(?:^|[\s(` + "`" + `])--([a-z][a-z0-9-]*[a-z0-9])(?:[^A-Za-z0-9-]|$)`)
	found := 0
	for _, r := range findings.Rules() {
		m := r.Meta()
		texts := []string{m.Cause, m.Grading}
		for _, rem := range m.Remedies {
			texts = append(texts, rem.Text)
		}
		for _, text := range texts {
			for _, sub := range flagRE.FindAllStringSubmatch(text, -1) {
				found++
				if !known[sub[1]] {
					t.Errorf("%s names --%s, which no verb has: %q", m.ID, sub[1], text)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no rule text names a flag: the test checks nothing")
	}
}
