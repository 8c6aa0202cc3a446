package lifecycle

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/units"
)

// WriteDiff renders a diff as text, Markdown or JSON (the JSON field names are stable).
func WriteDiff(w io.Writer, format report.Format, d *DiffResult) error {
	switch format {
	case report.JSON:
		return writeJSON(w, d)
	case report.Markdown:
		return writeDiffMarkdown(w, d)
	}
	return writeDiffText(w, d)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// arrow shows "a → b", or just "a" when unchanged.
func arrow(a, b string) string {
	if a == b {
		return a
	}
	return a + " → " + b
}

func intArrow(a, b int) string {
	return arrow(fmt.Sprint(a), fmt.Sprint(b))
}

func sideText(v int64, present bool, f func(int64) string) string {
	if !present {
		return "-"
	}
	return f(v)
}

func stateCells(s StateDiff) (mode, elements, bytes string) {
	oldP, newP := s.Change != Added, s.Change != Removed
	mode = arrow(dashIfEmpty(s.OldMode, oldP), dashIfEmpty(s.NewMode, newP))
	num := func(v int64) string { return fmt.Sprint(v) }
	switch s.Kind {
	case KindKeyed:
		num = func(int64) string { return "unknown" } // _metadata does not count keyed entries
	case KindCoordinator:
		num = func(int64) string { return "·" } // one serialized blob, no elements
	}
	elements = arrow(sideText(s.OldElements, oldP, num), sideText(s.NewElements, newP, num))
	bytes = arrow(sideText(s.OldBytes, oldP, units.Bytes), sideText(s.NewBytes, newP, units.Bytes))
	if s.Kind == KindOperator && oldP && newP && s.OldElements > 0 && s.NewElements != s.OldElements {
		elements += fmt.Sprintf(" (×%.2f)", float64(s.NewElements)/float64(s.OldElements))
	}
	return
}

func dashIfEmpty(s string, present bool) string {
	if !present {
		return "-"
	}
	if s == "" {
		return "·"
	}
	return s
}

func keyGroupCell(op *OperatorDiff) string {
	if op.OldKeyGroups == 0 && op.NewKeyGroups == 0 {
		return "-"
	}
	return fmt.Sprintf("%s of %s", intArrow(op.OldKeyGroups, op.NewKeyGroups), intArrow(op.OldMaxParallelism, op.NewMaxParallelism))
}

func sizeLine(d *DiffResult) string {
	delta := d.New.Size - d.Old.Size
	ratio := ""
	if d.Old.Size > 0 {
		ratio = fmt.Sprintf(", ×%.2f", float64(d.New.Size)/float64(d.Old.Size))
	}
	line := fmt.Sprintf("_metadata %s → %s (%+d bytes%s); checkpoint %d → %d; format %s", units.Bytes(d.Old.Size), units.Bytes(d.New.Size), delta, ratio, d.Old.CheckpointID, d.New.CheckpointID, d.Old.FormatText())
	if d.FormatChanged() {
		line += " → " + d.New.FormatText() + ": the format changed, so the size change is not growth and forecasts nothing"
	}
	return line
}

func writeDiffText(w io.Writer, d *DiffResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Flink Preflight diff: %s → %s\n  %s\n\n", d.Old.Source, d.New.Source, sizeLine(d))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATOR\tCHANGE\tPARALLELISM\tMAX\tKEY GROUPS\tSTATE\tKIND\tCHANGE\tMODE\tELEMENTS\tBYTES")
	for i := range d.Operators {
		op := &d.Operators[i]
		head := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", op.Label(), op.Change, intArrow(op.OldParallelism, op.NewParallelism), intArrow(op.OldMaxParallelism, op.NewMaxParallelism), keyGroupCell(op))
		if len(op.States) == 0 {
			fmt.Fprintf(tw, "%s\t-\t\t\t\t\t\n", head)
			continue
		}
		for j, s := range op.States {
			if j > 0 {
				head = "\t\t\t\t"
			}
			mode, el, by := stateCells(s)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", head, s.Name, s.Kind, s.Change, mode, el, by)
		}
	}
	tw.Flush()
	writeFindingsText(&b, d.Findings)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFindingsText(b *strings.Builder, fs []Finding) {
	if len(fs) == 0 {
		b.WriteString("\nNo growth signature found.\n")
		return
	}
	b.WriteString("\nFINDINGS\n")
	for _, f := range fs {
		fmt.Fprintf(b, "  %s %s: %s", f.Severity, f.ID, f.Title)
		if f.Operator != "" {
			fmt.Fprintf(b, " — %s", f.Operator)
		}
		if f.State != "" {
			fmt.Fprintf(b, " / %s", f.State)
		}
		fmt.Fprintf(b, "\n      %s\n", f.Detail)
	}
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func writeDiffMarkdown(w io.Writer, d *DiffResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Checkpoint diff: `%s` → `%s`\n\n%s\n\n", d.Old.Source, d.New.Source, sizeLine(d))
	b.WriteString("| operator | change | parallelism | max | key groups | state | kind | state change | mode | elements | bytes |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i := range d.Operators {
		op := &d.Operators[i]
		head := fmt.Sprintf("| %s | %s | %s | %s | %s ", mdCell(op.Label()), op.Change, intArrow(op.OldParallelism, op.NewParallelism), intArrow(op.OldMaxParallelism, op.NewMaxParallelism), keyGroupCell(op))
		if len(op.States) == 0 {
			b.WriteString(head + "| - | | | | | |\n")
			continue
		}
		for j, s := range op.States {
			if j > 0 {
				head = "| | | | | "
			}
			mode, el, by := stateCells(s)
			fmt.Fprintf(&b, "%s| `%s` | %s | %s | %s | %s | %s |\n", head, mdCell(s.Name), s.Kind, s.Change, mode, el, by)
		}
	}
	writeFindingsMarkdown(&b, d.Findings)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFindingsMarkdown(b *strings.Builder, fs []Finding) {
	if len(fs) == 0 {
		b.WriteString("\nNo growth signature found.\n")
		return
	}
	b.WriteString("\n### Findings\n\n")
	for _, f := range fs {
		fmt.Fprintf(b, "- **%s %s** %s", f.Severity, f.ID, mdCell(f.Title))
		if f.Operator != "" {
			fmt.Fprintf(b, " — %s", mdCell(f.Operator))
		}
		if f.State != "" {
			fmt.Fprintf(b, " / `%s`", mdCell(f.State))
		}
		fmt.Fprintf(b, ": %s\n", mdCell(f.Detail))
	}
}

// WriteTrend renders a trend as text, Markdown or JSON (the JSON field names are stable).
func WriteTrend(w io.Writer, format report.Format, r *TrendResult) error {
	if format == report.JSON {
		return writeJSON(w, r)
	}
	md := format == report.Markdown
	var b strings.Builder
	if md {
		b.WriteString("## Checkpoint trend\n\n| checkpoint | source | _metadata | change | top states |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("Flink Preflight trend\n\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if !md {
		fmt.Fprintln(tw, "CHECKPOINT\t_METADATA\tCHANGE\tTOP STATES\tSOURCE")
	}
	for i, p := range r.Points {
		change := "-"
		if i > 0 {
			prev := r.Points[i-1].Size
			change = fmt.Sprintf("%+d B", p.Size-prev)
			if prev > 0 {
				change += fmt.Sprintf(" (×%.2f)", float64(p.Size)/float64(prev))
			}
			if v := r.Points[i-1].Version; v != p.Version {
				change += fmt.Sprintf(", format v%d → v%d", v, p.Version)
			}
		}
		var tops []string
		for _, s := range p.TopStates {
			t := fmt.Sprintf("%s %s", s.Name, units.Bytes(s.Bytes))
			if pseudo, ok := strings.CutPrefix(s.Name, "("); ok {
				// (keyed), (coordinator): only the operator tells such states apart.
				t = fmt.Sprintf("%s %s %s", s.Operator, strings.TrimSuffix(pseudo, ")"), units.Bytes(s.Bytes))
			}
			if s.Elements > 0 {
				t += fmt.Sprintf(" ×%d", s.Elements)
			}
			tops = append(tops, t)
		}
		if md {
			fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s |\n", p.CheckpointID, mdCell(p.Source), units.Bytes(p.Size), change, mdCell(strings.Join(tops, "; ")))
		} else {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", p.CheckpointID, units.Bytes(p.Size), change, strings.Join(tops, "; "), p.Source)
		}
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nforecast: %s\n", r.Forecast)
	if md {
		writeFindingsMarkdown(&b, r.Findings)
	} else {
		writeFindingsText(&b, r.Findings)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
