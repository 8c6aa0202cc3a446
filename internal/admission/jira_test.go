package admission

import (
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestJiras: the JIRA id a vertex's line cites for a rule: the first finding of the rule on the
// vertex (any case) that cites one, else the first finding of the rule that does.
func TestJiras(t *testing.T) {
	const v1, v2 = "0d9ffb4f280d028d86dadba01ac205d7", "a004e297ed656c7b8e968e04069ca1a0"
	fs := []*pb.Finding{
		{RuleId: "PF101", VertexId: v2, Message: "Pending files are lost (FLINK-31689)."},
		{RuleId: "PF101", VertexId: v1, Message: "No issue cited."},
		{RuleId: "PF101", VertexId: "0D9FFB4F280D028D86DADBA01AC205D7", References: []string{"https://issues.apache.org/jira/browse/FLINK-100"}},
		{RuleId: "PF101", VertexId: v1, CatalogEntry: "FLINK-200"},
		{RuleId: "PF102", VertexId: v1, Title: "Title cites FLINK-300", Message: "and the message FLINK-301"},
		{RuleId: "PF103", VertexId: v1, Message: "No issue cited."},
	}
	tests := []struct {
		rule, vertex, want string
	}{
		{"PF101", v1, "FLINK-100"},       // the vertex's first citing finding, its ID in another case
		{"PF101", v2, "FLINK-31689"},     // the vertex's own
		{"PF101", "ffff", "FLINK-31689"}, // not on the vertex: the rule's first
		{"PF102", v2, "FLINK-300"},       // the first id in the finding's text
		{"PF103", v1, ""},                // no finding of the rule cites one
		{"PF999", v1, ""},                // no finding of the rule
	}
	for _, tt := range tests {
		if got := indexJiras(fs).of(tt.rule, tt.vertex); got != tt.want {
			t.Errorf("rule %s on %s: %q, want %q", tt.rule, tt.vertex, got, tt.want)
		}
	}
}
