package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// ActionName is the short upper-case name of a decision action: APPROVE, ADJUST or VETO.
func ActionName(a pb.DecisionAction) string {
	return strings.TrimPrefix(a.String(), "DECISION_ACTION_")
}

// WriteDecisionText renders an autoscaler decision for a terminal: the action, the checkpoint it
// rests on, a table of the vertices and the reason of each.
func WriteDecisionText(w io.Writer, r *pb.DecideResponse) error {
	var b strings.Builder
	decisionHeader(&b, r)
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERTEX\tNAME\tCURRENT\tPROPOSED\tACTION\tDECIDED\tFINDINGS")
	for _, v := range r.GetVertices() {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%d\t%s\n", v.GetVertexId(), dash(v.GetName()), v.GetCurrentParallelism(), v.GetProposedParallelism(),
			ActionName(v.GetAction()), v.GetParallelism(), strings.Join(v.GetFindingIds(), " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	for _, v := range r.GetVertices() {
		fmt.Fprintf(&b, "%s: %s\n", v.GetVertexId(), v.GetReason())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteDecisionMarkdown renders an autoscaler decision with its vertices as a Markdown table.
func WriteDecisionMarkdown(w io.Writer, r *pb.DecideResponse) error {
	var b strings.Builder
	decisionHeader(&b, r)
	b.WriteString("| vertex | name | current | proposed | action | decided | findings | reason |\n|---|---|---|---|---|---|---|---|\n")
	for _, v := range r.GetVertices() {
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %s | %d | %s | %s |\n", v.GetVertexId(), mdCell(dash(v.GetName())), v.GetCurrentParallelism(), v.GetProposedParallelism(),
			ActionName(v.GetAction()), v.GetParallelism(), strings.Join(v.GetFindingIds(), " "), strings.ReplaceAll(v.GetReason(), "|", "\\|"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func decisionHeader(b *strings.Builder, r *pb.DecideResponse) {
	fmt.Fprintf(b, "DECISION: %s\n", ActionName(r.GetAction()))
	if r.GetCheckpoint() != "" {
		fmt.Fprintf(b, "checkpoint: %s\n", r.GetCheckpoint())
	}
	if n := r.GetCheckpointNote(); n != "" {
		fmt.Fprintf(b, "chosen: %s\n", n)
	}
	if fv := r.GetFileVerification(); fv != nil {
		fmt.Fprintf(b, "state files: %s\n", fv.GetSummary())
		writeFileProblems(b, fv.GetProblems(), 10)
	}
	if r.GetFailed() {
		fmt.Fprintf(b, "failed: %s\n", r.GetFailure())
	}
	b.WriteString("\n")
}

// writeFileProblems lists the first limit problems of a file verification, one a line, and
// counts the rest.
func writeFileProblems(b *strings.Builder, ps []*pb.FileProblem, limit int) {
	for _, p := range ps[:min(len(ps), limit)] {
		kind := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(p.GetKind().String(), "FILE_PROBLEM_KIND_"), "_", " "))
		fmt.Fprintf(b, "  %s: %s", kind, p.GetUri())
		switch {
		case p.GetKind() == pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE && p.GetAtLeast():
			fmt.Fprintf(b, " (at least %s bytes recorded, %s found)", units.Thousands(p.GetExpectedSize()), units.Thousands(p.GetActualSize()))
		case p.GetKind() == pb.FileProblemKind_FILE_PROBLEM_KIND_WRONG_SIZE:
			fmt.Fprintf(b, " (%s bytes recorded, %s found)", units.Thousands(p.GetExpectedSize()), units.Thousands(p.GetActualSize()))
		case p.GetDetail() != "" && p.GetKind() != pb.FileProblemKind_FILE_PROBLEM_KIND_MISSING:
			fmt.Fprintf(b, " (%s)", p.GetDetail())
		}
		b.WriteString("\n")
	}
	if rest := len(ps) - limit; rest > 0 {
		fmt.Fprintf(b, "  and %s more (-o json lists them all)\n", units.Thousands(int64(rest)))
	}
}
