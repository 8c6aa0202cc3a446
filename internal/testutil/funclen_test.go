package testutil

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function outside tests, generated code and bench/ may be: one a
// reader can hold in their head (issue #28).
const maxFuncLines = 120

// TestNoLongFunctions reads every Go file of the module and fails on a function (declaration
// to closing brace, its literals included) longer than maxFuncLines.
func TestNoLongFunctions(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case d.IsDir() && (rel == "bench" || strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasSuffix(path, ".pb.go") || strings.HasSuffix(path, ".pb.gw.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files++
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
					t.Errorf("%s: %s is %d lines (at most %d): split it into named steps", rel, fn.Name.Name, n, maxFuncLines)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files below %s: not the module", files, root)
	}
}
