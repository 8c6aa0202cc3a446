package server

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// threeVertexJob writes a job's checkpoint folder (chk-1741, chk-1742, and chk-1743 still in
// progress) for a table filesystem sink with compaction deployed as three vertices:
// "Source: orders -> streaming-writer" (4 of 128), "compact-coordinator" (1 of 1) and
// "compact-operator" (4 of 128). The operators' state is the compact-sink scenario's.
func threeVertexJob(t *testing.T) (dir string, vertices []flinkresttest.Vertex) {
	t.Helper()
	md := scenarios.CompactSink()
	var ops []checkpoint.OperatorState
	for _, op := range md.Operators {
		if op.Name != "PartitionCommitter" && op.Name != "Sink: end" {
			ops = append(ops, op)
		}
	}
	md.Operators = ops
	var buf bytes.Buffer
	if err := checkpoint.Write(&buf, md); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	for i, name := range []string{"chk-1741", "chk-1742"} {
		p := filepath.Join(dir, "job", name, "_metadata")
		testutil.WriteFile(t, p, buf.Bytes())
		ts := time.Now().Add(time.Duration(i-3) * time.Minute)
		os.Chtimes(p, ts, ts)
	}
	os.MkdirAll(filepath.Join(dir, "job", "chk-1743"), 0o755)
	id := func(uid string) string { return checkpoint.OperatorIDFromUID(uid).String() }
	return dir, []flinkresttest.Vertex{
		{ID: id("orders-source"), Operators: []string{"Source: orders", "streaming-writer"}, Parallelism: 4, MaxParallelism: 128},
		{ID: id("compact-coordinator"), Operators: []string{"compact-coordinator"}, Parallelism: 1, MaxParallelism: 1},
		{ID: id("compact-operator"), Operators: []string{"compact-operator"}, Parallelism: 4, MaxParallelism: 128},
	}
}

// TestAutoscalerSimulation plays an autoscaler against a running preflightd: the job comes from
// a fake Flink REST (every recorded version), its newest checkpoint from a real folder, and each
// proposal is decided over gRPC and over HTTP. Every decision is then held against a plain check
// at the proposed and the decided parallelism: a vertex is vetoed or adjusted exactly where the
// check at the proposal denies the restore, and what is approved or adjusted to passes.
func TestAutoscalerSimulation(t *testing.T) {
	dir, vs := threeVertexJob(t)
	source, coordinator, compact := vs[0].ID, vs[1].ID, vs[2].ID
	for _, version := range flinkresttest.Versions {
		t.Run(version, func(t *testing.T) {
			fake := flinkresttest.Start(t, flinkresttest.Job{Version: version, Vertices: vs, CheckpointID: 1742,
				CheckpointPath: "file:" + filepath.Join(dir, "job", "chk-1742")})
			d := startDaemon(t, "--allow", dir, "--allow", fake.URL)
			c := d.client(t)
			job := &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID}
			rounds := []struct {
				name     string
				proposal map[string]int32
				align    bool
				want     map[string]pb.DecisionAction
				decided  map[string]int32
				overall  pb.DecisionAction
			}{
				{"scale everything up", map[string]int32{source: 8, coordinator: 2, compact: 8}, false,
					map[string]pb.DecisionAction{source: pb.DecisionAction_DECISION_ACTION_APPROVE, coordinator: pb.DecisionAction_DECISION_ACTION_VETO, compact: pb.DecisionAction_DECISION_ACTION_VETO},
					map[string]int32{source: 8, coordinator: 1, compact: 4}, pb.DecisionAction_DECISION_ACTION_VETO},
				{"source only", map[string]int32{source: 8}, false,
					map[string]pb.DecisionAction{source: pb.DecisionAction_DECISION_ACTION_APPROVE}, map[string]int32{source: 8}, pb.DecisionAction_DECISION_ACTION_APPROVE},
				{"source beyond its max parallelism", map[string]int32{source: 200}, false,
					map[string]pb.DecisionAction{source: pb.DecisionAction_DECISION_ACTION_ADJUST}, map[string]int32{source: 128}, pb.DecisionAction_DECISION_ACTION_ADJUST},
				{"aligned to key groups", map[string]int32{source: 6, compact: 2}, true,
					map[string]pb.DecisionAction{source: pb.DecisionAction_DECISION_ACTION_ADJUST, compact: pb.DecisionAction_DECISION_ACTION_APPROVE}, map[string]int32{source: 8, compact: 2}, pb.DecisionAction_DECISION_ACTION_ADJUST},
			}
			for _, r := range rounds {
				req := &pb.DecideRequest{Job: job, ProposedParallelism: r.proposal, AlignToKeyGroups: r.align}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				resp, err := c.Decide(ctx, req)
				cancel()
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if resp.GetAction() != r.overall || resp.GetFailed() {
					t.Fatalf("%s: %s", r.name, protojson.Format(resp))
				}
				if !strings.HasSuffix(resp.GetCheckpoint(), "chk-1742/_metadata") || resp.GetCheckpointChoice().GetOrigin() != "flink-rest" {
					t.Errorf("%s: read %s (%s)", r.name, resp.GetCheckpoint(), resp.GetCheckpointNote())
				}
				for _, v := range resp.GetVertices() {
					if v.GetAction() != r.want[v.GetVertexId()] || v.GetParallelism() != r.decided[v.GetVertexId()] {
						t.Errorf("%s: %s %s → %d, want %s → %d (%s)", r.name, v.GetName(), v.GetAction(), v.GetParallelism(), r.want[v.GetVertexId()], r.decided[v.GetVertexId()], v.GetReason())
					}
					holdAgainstCheck(t, c, job, v)
				}
				// The same proposal over HTTP gives the same decision.
				body, _ := protojson.Marshal(req)
				code, b := post(t, "http://"+d.HTTPAddr+"/v1/decide", body)
				var viaHTTP pb.DecideResponse
				if err := protojson.Unmarshal(b, &viaHTTP); err != nil || code != 200 {
					t.Fatalf("%s over HTTP: %d %s", r.name, code, b)
				}
				if protojson.Format(&viaHTTP) != protojson.Format(resp) {
					t.Errorf("%s: HTTP answer differs:\n%s\nvs\n%s", r.name, protojson.Format(&viaHTTP), protojson.Format(resp))
				}
				var generic map[string]any
				if json.Unmarshal(b, &generic) != nil || generic["action"] != r.overall.String() {
					t.Errorf("%s: JSON action %v", r.name, generic["action"])
				}
			}
		})
	}
}

// holdAgainstCheck checks a vertex decision with CheckRescale of the same job (same chains, same
// newest checkpoint; the folder's newest is checked by TestAutoscalerLatestInFolder): the
// proposal denies exactly when the decision is not APPROVE, and the decided parallelism passes
// unless the decision is VETO.
func holdAgainstCheck(t *testing.T, c interface {
	Check(context.Context, *pb.CheckRescaleRequest) (*pb.RescaleReport, error)
}, job *pb.FlinkJob, v *pb.VertexDecision) {
	t.Helper()
	denies := func(p int32) bool {
		rep, err := c.Check(context.Background(), &pb.CheckRescaleRequest{
			Job:  job,
			Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{v.GetVertexId(): p}}})
		if err != nil {
			t.Fatalf("check %s=%d: %v", v.GetVertexId(), p, err)
		}
		for _, f := range rep.GetFindings() {
			if f.GetVertexId() == v.GetVertexId() && f.GetSeverity() == pb.Severity_SEVERITY_ERROR {
				return true
			}
		}
		return false
	}
	proposedDenies := denies(v.GetProposedParallelism())
	aligned := v.GetMaxParallelism() <= 0 || v.GetMaxParallelism()%v.GetProposedParallelism() == 0
	switch v.GetAction() {
	case pb.DecisionAction_DECISION_ACTION_APPROVE:
		if proposedDenies {
			t.Errorf("%s approved at %d, but the check denies it", v.GetName(), v.GetProposedParallelism())
		}
	case pb.DecisionAction_DECISION_ACTION_ADJUST:
		if !proposedDenies && aligned {
			t.Errorf("%s adjusted although %d passes the check", v.GetName(), v.GetProposedParallelism())
		}
		if denies(v.GetParallelism()) {
			t.Errorf("%s adjusted to %d, which the check denies", v.GetName(), v.GetParallelism())
		}
	case pb.DecisionAction_DECISION_ACTION_VETO:
		if !proposedDenies {
			t.Errorf("%s vetoed at %d, but the check allows it", v.GetName(), v.GetProposedParallelism())
		}
	}
}

// The newest complete checkpoint of the folder is the one the REST API names, and checking it
// by folder gives the same findings as checking it through the job.
func TestAutoscalerLatestInFolder(t *testing.T) {
	dir, vs := threeVertexJob(t)
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", Vertices: vs, CheckpointPath: "file:" + filepath.Join(dir, "job", "chk-1742")})
	h := startInProcess(t, Config{Allow: []string{dir, fake.URL}})
	ctx := context.Background()
	plan := &pb.RescalePlan{VertexParallelism: map[string]int32{vs[2].ID: 8}}
	byFolder, err := h.c.Check(ctx, &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Join(dir, "job")}, Latest: true}, Plan: plan, Options: &pb.CheckOptions{FlinkVersion: "2.1.0"}})
	if err != nil {
		t.Fatal(err)
	}
	byJob, err := h.c.Check(ctx, &pb.CheckRescaleRequest{Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID}, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	if byFolder.GetCheckpointChoice().GetCheckpointId() != 1742 || !strings.Contains(byFolder.GetCheckpointChoice().GetNote(), "skipped incomplete chk-1743") {
		t.Errorf("folder choice %v", byFolder.GetCheckpointChoice())
	}
	if byFolder.GetVerdict() != pb.Verdict_VERDICT_DENY || ruleIDs(byFolder) != ruleIDs(byJob) {
		t.Errorf("folder %v %s, job %v %s", byFolder.GetVerdict(), ruleIDs(byFolder), byJob.GetVerdict(), ruleIDs(byJob))
	}
}
