package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// WriteMarkdown renders a check report as GitHub-flavoured Markdown, e.g. for a pull-request comment.
func WriteMarkdown(w io.Writer, r *pb.RescaleReport) error {
	return WriteMarkdownLimited(w, r, DefaultLimits)
}

// WriteMarkdownLimited is WriteMarkdown showing what lim allows.
func WriteMarkdownLimited(w io.Writer, r *pb.RescaleReport, lim Limits) error {
	return WriteMarkdownTable(w, r, nil, lim)
}

// WriteMarkdownTable is WriteMarkdownLimited for a report that keeps only some operators
// (engine.Request.Each), as WriteTextTable: the operators table comes from t (t nil: from
// r.Operators).
func WriteMarkdownTable(w io.Writer, r *pb.RescaleReport, t *OperatorTable, lim Limits) error {
	if t == nil {
		t = &OperatorTable{ops: r.GetOperators()}
	}
	var b strings.Builder
	c := r.GetCheckpoint()
	fmt.Fprintf(&b, "## Flink Preflight: **%s**\n\n", VerdictName(r.GetVerdict()))
	fmt.Fprintf(&b, "`%s`: %s\n\n", c.GetSource(), checkpointLine(c))
	if fv := r.GetFileVerification(); fv != nil {
		fmt.Fprintf(&b, "State files: %s\n\n", fv.GetSummary())
	}
	idx := indexReferenced(r)
	fs := r.GetFindings()
	shown := fs[:min(len(fs), lim.Findings)]
	if len(fs) > 0 {
		b.WriteString("### Findings\n\n| Severity | Rule | Operator | State | New subtasks | What happens |\n|---|---|---|---|---|---|\n")
		for _, f := range shown {
			subtasks := "none"
			if len(f.GetAffectedSubtasks()) > 0 {
				subtasks = units.Ranges(f.GetAffectedSubtasks())
			}
			operator := ""
			if f.GetOperatorId() != "" {
				operator = idx.finding(f).label()
				if n := len(f.GetOperatorIds()); n > 1 {
					operator += " and " + units.Thousands(int64(n-1)) + " more"
				}
			}
			fmt.Fprintf(&b, "| %s | %s %s | %s | %s | %s | %s |\n", SeverityName(f.GetSeverity()), f.GetRuleId(), mdCell(f.GetTitle()),
				mdCell(dash(operator)), mdCell(dash(statesCellOf(f))), subtasks, mdCell(f.GetMessage()))
		}
		if len(fs) > len(shown) {
			b.WriteString("\n" + mdCell(leftOutFindings(fs, len(shown))) + "\n")
		}
		b.WriteString("\n### Fixes\n\n")
		for _, f := range shown {
			if f.GetRemediation() == "" {
				continue
			}
			fmt.Fprintf(&b, "- **%s** %s", f.GetRuleId(), mdCell(f.GetRemediation()))
			if len(f.GetReferences()) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(f.GetReferences(), ", "))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("No findings.\n\n")
	}
	if len(r.GetSafeParallelism()) > 0 {
		b.WriteString("### Nearest safe parallelism\n\n| Vertex | Requested | Below | Above |\n|---|---|---|---|\n")
		for _, s := range r.GetSafeParallelism() {
			fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", mdCell(idx.vertex(s)), s.GetRequested(), orNone(s.GetBelow()), orNone(s.GetAbove()))
		}
		b.WriteString("\n")
	}
	if n := t.Len(); n > 0 {
		b.WriteString("### Operators\n\n| Operator | ID | Parallelism | Max | Operator state | Keyed | Payload/subtask |\n|---|---|---|---|---|---|---|\n")
		t.rowsWithID(lim.Operators, func(row [7]string, id string) {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s | %s |\n", mdCell(row[0]), id,
				row[2], row[3], mdCell(row[4]), row[5], row[6])
		})
		if n > lim.Operators {
			b.WriteString("\n" + mdCell(leftOutOperators(n-lim.Operators)) + "\n")
		}
		b.WriteString("\n_" + legend(operatorsLegend, true) + "_\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteInspectMarkdown renders an inspection as Markdown, with the legend of its columns.
func WriteInspectMarkdown(w io.Writer, r *pb.InspectCheckpointResponse) error {
	if err := writeInspectMarkdownTable(w, r); err != nil {
		return err
	}
	return writeInspectLegend(w, true)
}

// writeInspectMarkdownTable is WriteInspectMarkdown without the legend.
func writeInspectMarkdownTable(w io.Writer, r *pb.InspectCheckpointResponse) error {
	var b strings.Builder
	c := r.GetCheckpoint()
	fmt.Fprintf(&b, "## `%s`\n\n%s\n\n| Operator | UID | ID | Parallelism | Max | Operator state | Keyed | Looks like |\n|---|---|---|---|---|---|---|---|\n", c.GetSource(), checkpointLine(c))
	for _, op := range r.GetOperators() {
		keyed := "-"
		if op.GetKeyedBytes() > 0 || len(op.GetKeyedHandleKinds()) > 0 {
			keyed = units.Bytes(op.GetKeyedBytes()) + " " + strings.Join(op.GetKeyedHandleKinds(), ",")
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %d | %d | %s | %s | %s |\n", mdCell(inspectName(op)), mdCell(dash(op.GetUid())), op.GetOperatorId(),
			op.GetParallelism(), op.GetMaxParallelism(), mdCell(stateInfoCell(op.GetStates())), keyed, mdCell(dash(op.GetCatalogEntry())))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "<br>")
}
