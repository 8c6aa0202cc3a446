// Package allrules links every rule family into the findings registry: the PF1xx rules of
// internal/findings, PF200 of internal/engine, PF210-PF211 of internal/statefiles (verify_files),
// the PF3xx classpath rules and the LC3xx lifecycle findings. Import it wherever the whole rule reference is shown (`preflight rules`,
// the docs/rules.md generator); it holds no rules itself and must not grow any.
package allrules

import (
	"github.com/flinkpreflight/preflight/internal/findings"

	// Registered with findings.RegisterDoc from their init functions.
	_ "github.com/flinkpreflight/preflight/internal/classpath"
	_ "github.com/flinkpreflight/preflight/internal/engine"
	_ "github.com/flinkpreflight/preflight/internal/lifecycle"
	_ "github.com/flinkpreflight/preflight/internal/statefiles"
)

// Docs returns the documentation of every rule the code can emit, in ID order.
func Docs() []findings.RuleDoc { return findings.RuleDocs() }
