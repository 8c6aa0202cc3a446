package findings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOneRuleOneFile keeps "adding a rule touches one rules file": every registered rule's
// table (a RuleMeta literal with its ID) is declared in exactly one rules_*.go file, next to
// its Check, and no other file declares rule tables.
func TestOneRuleOneFile(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{} // rule ID -> files declaring its RuleMeta
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "RuleMeta" {
				return true
			}
			for _, el := range lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if key, ok := kv.Key.(*ast.Ident); ok && key.Name == "ID" {
					if v, ok := kv.Value.(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(v.Value)
						declared[s] = append(declared[s], name)
					}
				}
			}
			return true
		})
	}
	for _, r := range Rules() {
		id := r.Meta().ID
		switch fs := declared[id]; {
		case len(fs) != 1:
			t.Errorf("%s: its RuleMeta is declared in %v, want exactly one file", id, fs)
		case !strings.HasPrefix(fs[0], "rules_"):
			t.Errorf("%s: its RuleMeta is in %s, want a rules_*.go file", id, fs[0])
		}
		delete(declared, id)
	}
	for id, fs := range declared {
		t.Errorf("%s: RuleMeta declared in %v but never registered", id, fs)
	}
}
