package main

import (
	"github.com/spf13/cobra"

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
-o markdown without rule IDs prints docs/rules.md, catalog bugs included.`,
		Example: `  preflight rules
  preflight rules PF113 PF151 -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := parseOutput(output)
			if err != nil {
				return err
			}
			docs, err := findings.SelectRuleDocs(args)
			if err != nil {
				return usageError{err}
			}
			var bugs []findings.BugDoc
			if len(args) == 0 {
				bugs = findings.CatalogBugDocs(nil)
			}
			w := cmd.OutOrStdout()
			switch format {
			case report.JSON:
				return findings.WriteRulesJSON(w, docs, bugs)
			case report.Markdown:
				return findings.WriteRulesMarkdown(w, docs, bugs)
			}
			return findings.WriteRulesText(w, docs)
		},
	}
	outputFlag(cmd, &output)
	return cmd
}
