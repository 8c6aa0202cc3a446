package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flinkpreflight/preflight/internal/atomicfile"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/restorecode"
)

type analyzeFlags struct {
	output     string
	catalogOut string
	force      bool
}

// newAnalyzeCommand is `preflight analyze`: what each operator's restore code assumes about its
// operator state, read from the job's bytecode.
func newAnalyzeCommand() *cobra.Command {
	var f analyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze JAR|DIR|CLASS...",
		Short: "Read what each operator's restore code assumes about its state, from the job's bytecode",
		Long: `analyze reads the class files of job jars, folders of classes or single .class files, and
reports, for every class whose restore code registers operator state (CheckpointedFunction,
ListCheckpointed, AbstractStreamOperator.initializeState, sink-v2 writers), each state's name,
distribution mode (SPLIT_DISTRIBUTE, UNION, BROADCAST) and what the restore code does with the
restored elements:

  ONE-UNGUARDED    takes an element without checking that one exists (fails on an empty list)
  EXACTLY-ONE      requires exactly one element
  AT-MOST-ONE      throws on more than one element
  FIRST-ONLY       reads the first element only: the others are dropped on scale-down
  MERGE-ALL        reads every element
  UNION-FILTER     union state: reads all, keeps what this subtask owns
  ORDER-DEPENDENT  depends on the elements' positions
  NOT-READ         registered, never read on restore
  UNKNOWN          the elements escape the analysis (code outside the given jars)

with the evidence: class, method, source line and bytecode offset. --catalog-out writes the
result as catalog entries (the shape of the built-in catalog), which check --catalog and the
daemon's catalogs read unchanged; check --job-jar runs the same analysis in one step.

Exit codes: 0 analyzed (errors about single classes or methods are listed in the report); 2 input
error (no input could be read, or --catalog-out would overwrite a file without --force); 3 internal
error.`,
		Example: `  preflight analyze testdata/custom-operator/job.jar
  preflight analyze build/libs/job-all.jar -o json | jq '.classes[].states[] | select(.assumption=="ONE-UNGUARDED")'
  preflight analyze job.jar --catalog-out job-catalog.json && preflight check ckpt/ --catalog job-catalog.json -p 8`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("name a job jar, a folder of classes or a .class file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalogOut, "catalog-out", "", "also write the result as a catalog file (JSON) for check --catalog")
	fl.BoolVar(&f.force, "force", false, "let --catalog-out replace an existing file")
	outputFlag(cmd, &f.output)
	return cmd
}

func runAnalyze(cmd *cobra.Command, args []string, f analyzeFlags) error {
	format, err := parseOutput(f.output)
	if err != nil {
		return err
	}
	if f.catalogOut != "" && !f.force {
		if _, err := os.Stat(f.catalogOut); err == nil {
			return usagef("--catalog-out %s exists; pass --force to replace it", f.catalogOut)
		}
	}
	rep, err := analyzeJars(cmd.Context(), args)
	if err != nil {
		return err
	}
	if f.catalogOut != "" {
		if err := atomicfile.Write(f.catalogOut, func(w io.Writer) error { return writeCatalog(w, rep.Catalog()) }); err != nil {
			return err
		}
	}
	return writeAnalysis(cmd.OutOrStdout(), format, rep)
}

// analyzeJars runs the restore-code analysis on the paths; it is an input error when none of
// them can be read at all.
func analyzeJars(ctx context.Context, paths []string) (*restorecode.Report, error) {
	inputs := make([]restorecode.Input, len(paths))
	for i, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, usagef("%s: %v", p, err)
		}
		inputs[i] = restorecode.Input{Path: p}
	}
	rep, err := restorecode.Analyze(ctx, inputs, restorecode.Options{})
	if err != nil {
		return nil, err
	}
	unread := 0
	for _, e := range rep.Errors {
		if e.Class == "" {
			unread++
		}
	}
	if unread == len(paths) && len(rep.Classes) == 0 {
		return nil, usagef("%s", rep.Errors[0].Error())
	}
	return rep, nil
}

func writeCatalog(w io.Writer, cat *findings.Catalog) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(cat)
}

// writeAnalysis renders the report: JSON exactly as restorecode.Report marshals, or a table.
func writeAnalysis(w io.Writer, format report.Format, rep *restorecode.Report) error {
	if format == report.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	md := format == report.Markdown
	var b strings.Builder
	if md {
		b.WriteString("| Class | State | Mode | Assumption | Restored only | Evidence |\n|---|---|---|---|---|---|\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if !md {
		fmt.Fprintln(tw, "CLASS\tSTATE\tMODE\tASSUMPTION\tRESTORED ONLY\tEVIDENCE")
	}
	for _, c := range rep.Classes {
		for _, s := range c.States {
			name := s.Name
			if name == restorecode.NameNotConstant || name == "" {
				name = "? (" + s.NameNote + ")"
			}
			row := []string{c.Class, name, s.Mode, s.Assumption, fmt.Sprint(s.RestoredOnly), evidenceCell(s.Evidence)}
			if md {
				for i := range row {
					row[i] = strings.ReplaceAll(row[i], "|", "\\|")
				}
				fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
			} else {
				fmt.Fprintln(tw, strings.Join(row, "\t"))
			}
		}
	}
	tw.Flush()
	if len(rep.Classes) == 0 {
		b.WriteString("No class registers operator state.\n")
	}
	if len(rep.Errors) > 0 {
		fmt.Fprintf(&b, "\n%d errors:\n", len(rep.Errors))
		for i, e := range rep.Errors {
			if i == 20 {
				fmt.Fprintf(&b, "  … and %d more (-o json lists them all)\n", len(rep.Errors)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", e.Error())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func evidenceCell(ev []restorecode.Evidence) string {
	if len(ev) == 0 {
		return "-"
	}
	var parts []string
	for _, e := range ev[:min(len(ev), 2)] {
		s := e.Method
		if e.Class != "" {
			s = e.Class[strings.LastIndexByte(e.Class, '.')+1:] + "." + s
		}
		parts = append(parts, fmt.Sprintf("%s:%d @%d", s, e.Line, e.Offset))
	}
	if len(ev) > 2 {
		parts = append(parts, fmt.Sprintf("+%d", len(ev)-2))
	}
	return strings.Join(parts, ", ")
}
