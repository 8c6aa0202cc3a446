package admission

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const (
	jobID     = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
	vSource   = "45b0254a46cabbc3efeea5d2e170ea5b"
	vCompact  = "0d9ffb4f280d028d86dadba01ac205d7"
	vCoord    = "d7b11ad20303f98d3eb37a5e0525fff8"
	vCommiter = "a004e297ed656c7b8e968e04069ca1a0"
)

// fakeBackend answers as the daemon does for the compact-sink job: raising compact-operator
// above 4 fails with PF101.
type fakeBackend struct {
	calls    int
	target   Target
	proposal map[string]int32
	err      error
	delay    time.Duration
}

func (f *fakeBackend) Decide(ctx context.Context, t Target, propose func([]Vertex) map[string]int32) (*pb.DecideResponse, error) {
	f.calls++
	f.target = t
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	f.proposal = propose([]Vertex{{vSource, 4}, {vCoord, 1}, {vCompact, 4}, {vCommiter, 1}})
	resp := &pb.DecideResponse{Action: pb.DecisionAction_DECISION_ACTION_APPROVE, Checkpoint: "s3://flink-data/checkpoints/" + jobID + "/chk-1742/_metadata",
		CheckpointChoice: &pb.CheckpointChoice{Kind: "checkpoint", CheckpointId: 1742, Uri: "s3://flink-data/checkpoints/" + jobID + "/chk-1742"}}
	for k, p := range f.proposal {
		vd := &pb.VertexDecision{VertexId: k, Key: k, CurrentParallelism: 4, ProposedParallelism: p, Parallelism: p, Action: pb.DecisionAction_DECISION_ACTION_APPROVE}
		if k == vCompact && p > 4 {
			vd.Name, vd.Action, vd.Parallelism, vd.FindingIds = "compact-operator", pb.DecisionAction_DECISION_ACTION_VETO, 4, []string{"PF101"}
			vd.Reason = "Raising the parallelism of the compact operator loses pending files."
			resp.Action = vd.Action
			resp.Findings = append(resp.Findings, &pb.Finding{RuleId: "PF101", VertexId: k, References: []string{"https://issues.apache.org/jira/browse/FLINK-31689"}})
		}
		resp.Vertices = append(resp.Vertices, vd)
	}
	return resp, nil
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReview(t *testing.T) {
	tests := []struct {
		file         string
		allowed      bool
		called       bool
		proposal     map[string]int32
		target       Target
		wantInMsg    []string
		wantNotInMsg string
	}{
		{"deployment-overrides-4-to-8.json", false, true, map[string]int32{vCompact: 8},
			Target{RESTURL: "http://compact-sink-rest.flink:8081", JobID: jobID}, []string{"denied", "PF101 (FLINK-31689)", `"compact-operator"`, "4 -> 8", "keep 4", "checkpoint 1742"}, ""},
		{"deployment-parallelism-4-to-8.json", false, true, map[string]int32{vCompact: 8, vSource: 8},
			Target{RESTURL: "http://compact-sink-rest.flink:8081", JobID: jobID}, []string{"PF101 (FLINK-31689)", "keep 4"}, ""},
		{"deployment-compact-down.json", true, true, map[string]int32{vCompact: 2}, Target{RESTURL: "http://compact-sink-rest.flink:8081", JobID: jobID}, []string{"allowed"}, "PF101"},
		{"deployment-stateless.json", true, false, nil, Target{}, []string{"stateless"}, ""},
		{"deployment-suspended.json", true, false, nil, Target{}, []string{"suspended"}, ""},
		{"deployment-image-only.json", true, false, nil, Target{}, []string{"touches no parallelism"}, ""},
		{"deployment-create-no-job.json", true, false, nil, Target{}, []string{"no job ID"}, ""},
		{"deployment-create-from-savepoint.json", false, true, map[string]int32{vSource: 8, vCoord: 8, vCompact: 8, vCommiter: 8},
			Target{Savepoint: "s3://flink-data/savepoints/savepoint-a1b2c3-0123456789ab"}, []string{"PF101"}, ""},
		{"deployment-reactive-replicas-2-to-4.json", false, true, map[string]int32{vCompact: 8, vSource: 8},
			Target{RESTURL: "http://compact-sink-rest.flink:8081", JobID: jobID}, []string{"PF101"}, ""},
		{"sessionjob-parallelism-4-to-8.json", false, true, map[string]int32{vCompact: 8, vSource: 8},
			Target{RESTURL: "http://session-cluster-rest.flink:8081", JobID: jobID}, []string{"FlinkSessionJob flink/compact-sink-job", "keep 4"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := &fakeBackend{}
			a := Review(context.Background(), fixture(t, tt.file), Config{}, b)
			if a.Allowed != tt.allowed || (b.calls > 0) != tt.called || a.Checked != tt.called {
				t.Fatalf("allowed %v, calls %d: %+v", a.Allowed, b.calls, a)
			}
			if !tt.allowed && a.Code != 403 {
				t.Errorf("code %d", a.Code)
			}
			if tt.called && (b.target != tt.target || !maps.Equal(b.proposal, tt.proposal)) {
				t.Errorf("target %+v proposal %v", b.target, b.proposal)
			}
			for _, w := range tt.wantInMsg {
				if !strings.Contains(a.Message, w) {
					t.Errorf("message lacks %q:\n%s", w, a.Message)
				}
			}
			if tt.wantNotInMsg != "" && strings.Contains(a.Message, tt.wantNotInMsg) {
				t.Errorf("message has %q:\n%s", tt.wantNotInMsg, a.Message)
			}
		})
	}
}

func TestReviewFailurePolicy(t *testing.T) {
	down := errors.New("flink rest: GET /jobs: connection refused")
	tests := []struct {
		name    string
		cfg     Config
		backend *fakeBackend
		allowed bool
		code    int32
		want    string
	}{
		{"open", Config{}, &fakeBackend{err: down}, true, 0, "compact-sink-rest.flink:8081"},
		{"closed", Config{FailClosed: true}, &fakeBackend{err: down}, false, 500, "compact-sink-rest.flink:8081"},
		{"deadline closed", Config{FailClosed: true, Timeout: 20 * time.Millisecond}, &fakeBackend{delay: time.Second}, false, 500, "no answer within 20ms"},
		{"deadline open", Config{Timeout: 20 * time.Millisecond}, &fakeBackend{delay: time.Second}, true, 0, "no answer within 20ms"},
		{"template", Config{RESTTemplate: "https://{namespace}.flink.example.com/{name}/{port}"}, &fakeBackend{err: down}, true, 0, "flink.flink.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Review(context.Background(), fixture(t, "deployment-overrides-4-to-8.json"), tt.cfg, tt.backend)
			if a.Allowed != tt.allowed || a.Code != tt.code || !strings.Contains(a.Message, tt.want) {
				t.Fatalf("%+v", a)
			}
			if tt.allowed && (len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], tt.want)) {
				t.Errorf("warnings %q", a.Warnings)
			}
		})
	}
}

func TestReviewBadResource(t *testing.T) {
	good := string(fixture(t, "deployment-overrides-4-to-8.json"))
	tests := []struct {
		name, doc, field string
	}{
		{"not json", "{", "(resource)"},
		{"wrong kind", `{"apiVersion":"flink.apache.org/v1beta1","kind":"Deployment","metadata":{"name":"x"}}`, "kind"},
		{"wrong version", `{"apiVersion":"flink.apache.org/v1alpha1","kind":"FlinkDeployment","metadata":{"name":"x"}}`, "apiVersion"},
		{"bad override", strings.Replace(good, vCompact+":8", vCompact+":eight", 1), "spec.flinkConfiguration.pipeline.jobvertex-parallelism-overrides[1]"},
		{"bad default", `{"apiVersion":"flink.apache.org/v1beta1","kind":"FlinkDeployment","metadata":{"name":"x"},"spec":{"job":{},"flinkConfiguration":{"parallelism.default":"0"}}}`, "spec.flinkConfiguration.parallelism.default"},
		{"bad last spec", strings.Replace(good, `"lastReconciledSpec": "{`, `"lastReconciledSpec": "[{`, 1), "status.reconciliationStatus.lastReconciledSpec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{}
			for _, closed := range []bool{false, true} {
				a := Review(context.Background(), []byte(tt.doc), Config{FailClosed: closed}, b)
				if a.Allowed == closed || !strings.Contains(a.Message, tt.field) || b.calls != 0 {
					t.Fatalf("closed %v: %+v", closed, a)
				}
			}
		})
	}
}

func TestNestedConfiguration(t *testing.T) {
	doc := `{"apiVersion":"flink.apache.org/v1beta1","kind":"FlinkDeployment","metadata":{"name":"x","namespace":"n"},
	"spec":{"job":{"upgradeMode":"last-state"},"flinkConfiguration":{"parallelism":{"default":8},"rest":{"port":9091}}},
	"status":{"jobStatus":{"jobId":"` + jobID + `"},"reconciliationStatus":{"lastReconciledSpec":"{\"job\":{},\"flinkConfiguration\":{\"parallelism.default\":\"4\"}}"}}}`
	b := &fakeBackend{}
	a := Review(context.Background(), []byte(doc), Config{}, b)
	if a.Allowed || b.target.RESTURL != "http://x-rest.n:9091" || !maps.Equal(b.proposal, map[string]int32{vCompact: 8, vSource: 8}) {
		t.Fatalf("%+v target %+v proposal %v", a, b.target, b.proposal)
	}
}

func TestParallelismBounds(t *testing.T) {
	base := `{"apiVersion":"flink.apache.org/v1beta1","kind":"FlinkDeployment","metadata":{"name":"x"},"spec":%s}`
	tests := []struct{ spec, field string }{
		{`{"job":{"parallelism":-1}}`, "spec.job.parallelism"},
		{`{"job":{"parallelism":40000}}`, "spec.job.parallelism"},
		{`{"job":{},"flinkConfiguration":{"parallelism.default":"99999999999"}}`, "spec.flinkConfiguration.parallelism.default"},
		{`{"job":{},"flinkConfiguration":{"scheduler-mode":"reactive"},"taskManager":{"replicas":-2}}`, "spec.taskManager.replicas"},
		{`{"job":{},"flinkConfiguration":{"scheduler-mode":"reactive","taskmanager.numberOfTaskSlots":"x"}}`, "spec.flinkConfiguration.taskmanager.numberOfTaskSlots"},
	}
	for _, tt := range tests {
		r, err := Parse([]byte(strings.Replace(base, "%s", tt.spec, 1)))
		if err == nil {
			_, err = Plan(r, DefaultRESTTemplate)
		}
		var e *Error
		if !errors.As(err, &e) || e.Field != tt.field {
			t.Errorf("%s: %v, want an error in %s", tt.spec, err, tt.field)
		}
	}
}

func TestRESTPort(t *testing.T) {
	tests := []struct {
		conf, want string
	}{
		{``, "8081"},
		{`{"rest.port":"9091"}`, "9091"},
		{`{"rest.port":" 45123 "}`, "45123"}, // above maxParallelism: still a port
		{`{"rest":{"port":"40000"}}`, "40000"},
		{`{"rest.port":"65536"}`, "8081"},
		{`{"rest.port":"0"}`, "8081"},
		{`{"rest.port":"http"}`, "8081"},
	}
	for _, tt := range tests {
		s := Spec{FlinkConfiguration: json.RawMessage(tt.conf)}
		if got := s.port(); got != tt.want {
			t.Errorf("%s: port %s, want %s", tt.conf, got, tt.want)
		}
	}
}
