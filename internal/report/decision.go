package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
	if r.GetFailed() {
		fmt.Fprintf(b, "failed: %s\n", r.GetFailure())
	}
	b.WriteString("\n")
}
