package admission

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// BenchmarkVerdictManyVetoes words the denial of a change to a job of n vertices that the
// decision vetoes one by one, each for its own finding citing a Flink JIRA issue (as one
// finding per operator does): what Review does with the backend's answer. Its cost should
// grow with the vertices (bench/README.md, "Checks against a running job").
//
//	go test ./internal/admission -run '^$' -bench VerdictManyVetoes -benchtime 5x
func BenchmarkVerdictManyVetoes(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		c := &Change{Kind: KindDeployment, Namespace: "ns", Name: "job"}
		resp := &pb.DecideResponse{Action: pb.DecisionAction_DECISION_ACTION_VETO, Checkpoint: "s3://b/chk-1/_metadata"}
		for i := range n {
			id := fmt.Sprintf("%032x", i)
			resp.Vertices = append(resp.Vertices, &pb.VertexDecision{VertexId: id, Name: fmt.Sprintf("op-%d", i), CurrentParallelism: 4, ProposedParallelism: 8,
				Parallelism: 4, Action: pb.DecisionAction_DECISION_ACTION_VETO, FindingIds: []string{"PF101"}, Reason: "Vetoed."})
			resp.Findings = append(resp.Findings, &pb.Finding{RuleId: "PF101", VertexId: id, Title: "Pending files are lost",
				Message: fmt.Sprintf("Operator op-%d loses pending files when raised from 4 to 8.", i), References: []string{"https://issues.apache.org/jira/browse/FLINK-31689"}})
		}
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				a := verdict(c, resp)
				if a.Allowed || strings.Count(a.Message, "PF101 (FLINK-31689)") != n {
					b.Fatalf("allowed %v, %d lines cite FLINK-31689", a.Allowed, strings.Count(a.Message, "PF101 (FLINK-31689)"))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}

// BenchmarkPlanOverrides reads a FlinkDeployment whose spec overrides the parallelism of each of
// n vertices (pipeline.jobvertex-parallelism-overrides, 4 in lastReconciledSpec, 8 in spec)
// and proposes the change for the n vertices of the running job: Parse, Plan and Proposal.
//
//	go test ./internal/admission -run '^$' -bench PlanOverrides -benchtime 5x
func BenchmarkPlanOverrides(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		var oldO, newO []string
		var vs []Vertex
		for i := range n {
			id := fmt.Sprintf("%032x", i)
			oldO, newO = append(oldO, id+":4"), append(newO, id+":8")
			vs = append(vs, Vertex{ID: id, Parallelism: 4})
		}
		spec := func(overrides []string) map[string]any {
			return map[string]any{"flinkConfiguration": map[string]string{keyOverrides: strings.Join(overrides, ",")},
				"job": map[string]any{"parallelism": 4, "upgradeMode": "savepoint", "state": "running"}}
		}
		last, err := json.Marshal(map[string]any{"spec": spec(oldO)})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := json.Marshal(map[string]any{"apiVersion": APIVersion, "kind": KindDeployment, "metadata": map[string]string{"name": "job", "namespace": "ns"},
			"spec": spec(newO), "status": map[string]any{"jobStatus": map[string]string{"jobId": "a1b2c3d4e5f60718293a4b5c6d7e8f90"},
				"reconciliationStatus": map[string]string{"lastReconciledSpec": string(last)}}})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				r, err := Parse(raw)
				if err != nil {
					b.Fatal(err)
				}
				c, err := Plan(r, DefaultRESTTemplate)
				if err != nil || c.Skip != "" {
					b.Fatalf("%v %q", err, c.Skip)
				}
				if p := c.Proposal(vs); len(p) != n {
					b.Fatalf("%d proposed", len(p))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}
