// Command gen writes docs/rules.md from the rule registry (internal/findings with every rule
// family internal/allrules links in) and the built-in catalog. Run it from the repository root after adding or changing a rule:
//
//	go run ./internal/findings/gen            # writes docs/rules.md
//	go run ./internal/findings/gen -o -       # prints it
//
// TestRulesDocUpToDate in internal/allrules fails while the committed file differs.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/flinkpreflight/preflight/internal/allrules" // every rule family
	"github.com/flinkpreflight/preflight/internal/atomicfile"
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
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(2)
	}
	if err := atomicfile.WriteFile(*out, b.Bytes()); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(2)
	}
}
