package allrules

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/findings"
)

const repoRoot = "../.."

// TestRulesDocUpToDate fails while docs/rules.md differs from what the registry generates.
func TestRulesDocUpToDate(t *testing.T) {
	have, err := os.ReadFile(filepath.Join(repoRoot, "docs", "rules.md"))
	if err != nil {
		t.Fatalf("%v: generate it with `go run ./internal/findings/gen` from the repository root (or make rules-doc)", err)
	}
	var want bytes.Buffer
	if err := findings.WriteRulesDoc(&want, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want.Bytes()) {
		t.Fatalf("docs/rules.md is stale (a rule table or catalog.json changed): regenerate it with `go run ./internal/findings/gen` from the repository root (or make rules-doc) and commit it")
	}
}

// ruleLiteral is a rule ID as the code writes it: a Go string literal holding only the ID.
var ruleLiteral = regexp.MustCompile(`"((?:PF|LC)\d{3})"`)

// emittedRuleIDs collects every rule ID literal in the repository's non-test Go files outside
// bench/: every ID the code can put in a finding is one of these (rule tables, ID constants).
func emittedRuleIDs(t *testing.T) map[string]string {
	t.Helper()
	ids := map[string]string{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != repoRoot && (strings.HasPrefix(name, ".") || name == "bench" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range ruleLiteral.FindAllSubmatch(src, -1) {
			ids[string(m[1])] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestEveryEmittedRuleIsDocumented checks that each rule ID the code can emit is in the
// registry (so `preflight rules` lists it) and has its section in docs/rules.md.
func TestEveryEmittedRuleIsDocumented(t *testing.T) {
	ids := emittedRuleIDs(t)
	for _, fam := range []string{"PF1", "PF2", "PF3", "LC3"} {
		found := false
		for id := range ids {
			found = found || strings.HasPrefix(id, fam)
		}
		if !found {
			t.Errorf("no %sxx rule ID found in the sources: the scan is broken", fam)
		}
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, d := range Docs() {
		registered[d.ID] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		if !registered[id] {
			t.Errorf("%s (in %s) is not in the rule registry: document it with a findings.RuleMeta", id, ids[id])
		}
		if !bytes.Contains(doc, []byte("\n## "+id+"\n")) {
			t.Errorf("%s (in %s) has no section in docs/rules.md", id, ids[id])
		}
	}
	if len(registered) != len(ids) {
		for id := range registered {
			if _, ok := ids[id]; !ok {
				t.Errorf("%s is registered but no source file names it", id)
			}
		}
	}
}
