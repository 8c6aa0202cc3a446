package main

import (
	"github.com/spf13/cobra"

	_ "github.com/flinkpreflight/preflight/internal/allrules" // every rule family in the registry
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
)

// newRulesCommand prints the built-in rules from their tables: what each detects, its
// severity and grading, the Flink bugs and versions it models, and the remediation.
func newRulesCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "rules [RULE-ID...]",
		Short: "List the rules behind the findings, with their Flink issues and affected versions",
		Long: `rules prints every rule (or the named ones): its ID, severity and title, what Flink does that it
detects, the Flink issues it models with their affected and fixed versions, and the remediation.
Without rule IDs, -o markdown prints docs/rules.md and -o json adds the catalog's bugs and operators.`,
		Example: `  preflight rules
  preflight rules PF113 PF135 -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := parseOutput(output)
			if err != nil {
				return err
			}
			docs, err := findings.SelectRuleDocs(args)
			if err != nil {
				return usageError{err}
			}
			w := cmd.OutOrStdout()
			all := len(args) == 0 // the whole reference, catalog included
			switch {
			case format == report.JSON && all:
				return findings.WriteRulesJSON(w, docs, findings.CatalogBugDocs(nil), findings.CatalogEntryDocs(nil))
			case format == report.JSON:
				return findings.WriteRulesJSON(w, docs, nil, nil)
			case format == report.Markdown && all:
				return findings.WriteRulesDoc(w, nil)
			case format == report.Markdown:
				return findings.WriteRulesMarkdown(w, docs, nil)
			}
			return findings.WriteRulesText(w, docs)
		},
	}
	outputFlag(cmd, &output)
	return cmd
}
