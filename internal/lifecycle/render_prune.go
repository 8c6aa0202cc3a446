package lifecycle

import (
	"fmt"
	"io"
	"strings"

	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/units"
)

// PruneSummary is a prune's outcome with the verification and the check on the source and on
// the result; it is the JSON shape of preflight prune -o json.
type PruneSummary struct {
	*SavepointResult
	Verified       bool     `json:"verified"`
	VerdictBefore  string   `json:"verdict_before"`
	VerdictAfter   string   `json:"verdict_after"`
	FindingsBefore []string `json:"findings_before"`
	FindingsAfter  []string `json:"findings_after"`
}

// WritePrune renders a prune's outcome as text, Markdown or JSON (the JSON field names are
// stable): what was removed, the files of the new savepoint, the verification and the check
// before and after.
func WritePrune(w io.Writer, format report.Format, s *PruneSummary) error {
	if format == report.JSON {
		return writeJSON(w, s)
	}
	res := s.SavepointResult
	var b strings.Builder
	md := format == report.Markdown
	verb := "wrote"
	if res.DryRun {
		verb = "dry run, would write"
	}
	p := res.Plan
	// Named as the other verbs name operators: position, name or uid, full ID.
	target := fmt.Sprintf("operator #%d (%s)", p.Position, p.OperatorID)
	switch {
	case p.OperatorName != "" && p.OperatorUID != "" && p.OperatorUID != p.OperatorName:
		target = fmt.Sprintf("#%d %s (uid %s, %s)", p.Position, p.OperatorName, p.OperatorUID, p.OperatorID)
	case p.OperatorName != "":
		target = fmt.Sprintf("#%d %s (%s)", p.Position, p.OperatorName, p.OperatorID)
	case p.OperatorUID != "":
		target = fmt.Sprintf("#%d uid %s (%s)", p.Position, p.OperatorUID, p.OperatorID)
	}
	if md {
		fmt.Fprintf(&b, "## Prune %s\n\n", res.Source)
	} else {
		fmt.Fprintf(&b, "Flink Preflight prune: %s\n", res.Source)
	}
	fmt.Fprintf(&b, "%s %s\n", verb, res.Out)
	fmt.Fprintf(&b, "_metadata: %s → %s (%+d bytes)\n\n", units.Bytes(res.SizeBefore), units.Bytes(res.SizeAfter), res.SizeAfter-res.SizeBefore)
	what := "removed from " + target + ":"
	if p.WholeOperator {
		what = "removed the whole operator " + target + ":"
	}
	fmt.Fprintln(&b, what)
	for _, r := range p.Removed {
		fmt.Fprintf(&b, "  - %s %s, %s", r.Name, r.Mode, units.Plural(int64(r.Subtasks), "subtask"))
		if r.Elements > 0 {
			fmt.Fprintf(&b, ", %s (offsets) gone from _metadata", units.Plural(r.Elements, "element"))
		}
		fmt.Fprintln(&b)
	}
	for _, l := range p.Losses {
		fmt.Fprintf(&b, "  forced: the job loses %s\n", l)
	}
	fmt.Fprintf(&b, "\nrelocation: %s\n", res.Relocation)
	missing := 0
	for _, fa := range res.Files {
		if fa.Action == "missing" {
			missing++
		}
		fmt.Fprintf(&b, "  %-16s %s", fa.Action, fa.Path)
		if fa.Bytes > 0 {
			fmt.Fprintf(&b, " (%s)", units.Bytes(fa.Bytes))
		}
		fmt.Fprintln(&b)
	}
	if missing > 0 {
		are := "are"
		if missing == 1 {
			are = "is"
		}
		fmt.Fprintf(&b, "  warning: %s %s not in the source folder either; provide them beside the new _metadata before restoring\n",
			units.Plural(int64(missing), "referenced state file"), are)
	}
	if !p.WholeOperator {
		fmt.Fprintf(&b, "\nnote: on restore Flink re-registers %q empty from the state file's header (its serializer must stay loadable); later checkpoints carry it with 0 elements\n", p.Removed[0].Name)
	}
	fmt.Fprintf(&b, "\nverified: re-read by the codec; re-encoding is stable; untouched operators byte-identical; %s absent\n", removedWhat(p))
	fmt.Fprintf(&b, "check at the stored parallelism: %s [%s] → %s [%s]\n", s.VerdictBefore, strings.Join(s.FindingsBefore, " "), s.VerdictAfter, strings.Join(s.FindingsAfter, " "))
	_, err := io.WriteString(w, b.String())
	return err
}

func removedWhat(p *PrunePlan) string {
	if p.WholeOperator {
		return "operator " + p.OperatorID
	}
	return fmt.Sprintf("state %q", p.Removed[0].Name)
}
