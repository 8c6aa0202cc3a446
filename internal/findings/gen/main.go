// Command gen writes docs/rules.md from the rule tables of internal/findings and the built-in
// catalog. Run it from the repository root after adding or changing a rule:
//
//	go run ./internal/findings/gen            # writes docs/rules.md
//	go run ./internal/findings/gen -o -       # prints it
//
// TestRulesDocUpToDate in internal/findings fails while the committed file differs.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flinkpreflight/preflight/internal/findings"
)

func main() {
	out := flag.String("o", "docs/rules.md", "output file (- for stdout)")
	flag.Parse()
	var b bytes.Buffer
	if err := findings.WriteRulesDoc(&b, nil); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(3)
	}
	if *out == "-" {
		if _, err := os.Stdout.Write(b.Bytes()); err != nil {
			os.Exit(3)
		}
		return
	}
	if err := writeAtomic(*out, b.Bytes()); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(2)
	}
}

// writeAtomic replaces path with data: a temporary file in the same directory, synced, then
// renamed over it.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".rules-*.md")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
