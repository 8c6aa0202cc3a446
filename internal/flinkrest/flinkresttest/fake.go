// Package flinkresttest serves a fake Flink JobManager REST API on loopback for tests: one job
// whose responses are recorded shapes of Flink 1.15, 1.20 and 2.1 (fixtures/), with the
// checkpoint path, IDs and times filled in.
package flinkresttest

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

//go:embed fixtures
var fixtures embed.FS

// Versions are the Flink releases with recorded responses.
var Versions = []string{"1.15", "1.20", "2.1"}

// DefaultJobID is the job the fixtures describe (a table filesystem sink with compaction; its
// vertices match testdata/compact-sink).
const DefaultJobID = "a1b2c3d4e5f60718293a4b5c6d7e8f90"

// Job configures the fake.
type Job struct {
	// Version selects the fixtures: "1.15", "1.20" or "2.1" (default "1.20").
	Version string
	// JobID (default DefaultJobID). Other job IDs answer 404 as Flink does.
	JobID string
	// CheckpointPath is the external path of the latest completed checkpoint (or savepoint).
	CheckpointPath string
	// CheckpointID (default 1742).
	CheckpointID int64
	// Savepoint reports the checkpoint as the latest savepoint, with no completed checkpoint.
	Savepoint bool
	// NoCheckpoint: checkpointing is on but nothing has completed yet.
	NoCheckpoint bool
	// CheckpointingDisabled: /checkpoints answers 404 as Flink does without checkpointing.
	CheckpointingDisabled bool
	// Age of the checkpoint at "now" (default 95 s).
	Age time.Duration
	// Unaligned reports unaligned checkpoints in /checkpoints/config.
	Unaligned bool
	// Token, when set, is required as "Authorization: Bearer <Token>".
	Token string
	// Delay holds every response this long (deadline tests).
	Delay time.Duration
	// Vertices, when set, replace the fixtures' four vertices (in the details, the plan and, for
	// 2.x, the stream graph), keeping every other field of the recorded shape.
	Vertices []Vertex
}

// Vertex is one JobVertex of a custom job.
type Vertex struct {
	ID             string   // JobVertexID hex (the head operator's ID)
	Operators      []string // operator names, head first; the vertex name joins them with " -> "
	Parallelism    int
	MaxParallelism int
}

// Server is a running fake.
type Server struct {
	*httptest.Server
	Job      Job
	Requests atomic.Int64
	now      time.Time
}

// Start serves the fake on 127.0.0.1 until the test ends.
func Start(t testing.TB, j Job) *Server {
	t.Helper()
	if j.Version == "" {
		j.Version = "1.20"
	}
	if j.JobID == "" {
		j.JobID = DefaultJobID
	}
	if j.CheckpointID == 0 {
		j.CheckpointID = 1742
	}
	if j.Age == 0 {
		j.Age = 95 * time.Second
	}
	if _, err := fixtures.ReadDir("fixtures/flink-" + j.Version); err != nil {
		t.Fatalf("flinkresttest: no fixtures for Flink %s", j.Version)
	}
	s := &Server{Job: j, now: time.UnixMilli(1764547200000)} // a fixed "now": deterministic notes
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	j := s.Job
	if j.Delay > 0 {
		select {
		case <-time.After(j.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if j.Token != "" && r.Header.Get("Authorization") != "Bearer "+j.Token {
		flinkError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if r.Method != http.MethodGet {
		flinkError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	path := r.URL.Path
	if path == "/config" {
		s.file(w, "config.json")
		return
	}
	rest, ok := strings.CutPrefix(path, "/jobs/")
	if !ok {
		flinkError(w, http.StatusNotFound, "Not found: "+path)
		return
	}
	id, sub, _ := strings.Cut(rest, "/")
	if id != j.JobID {
		// What Flink's JobDetailsHandler answers for an unknown job.
		flinkError(w, http.StatusNotFound, fmt.Sprintf("org.apache.flink.runtime.rest.NotFoundException: Job %s not found\n\tat org.apache.flink.runtime.rest.handler.job.AbstractExecutionGraphHandler...", id))
		return
	}
	switch sub {
	case "":
		s.file(w, "job.json")
	case "plan":
		s.file(w, "plan.json")
	case "checkpoints":
		if j.CheckpointingDisabled {
			flinkError(w, http.StatusNotFound, "Checkpointing has not been enabled.")
			return
		}
		s.file(w, "checkpoints.json")
	case "checkpoints/config":
		if j.CheckpointingDisabled {
			flinkError(w, http.StatusNotFound, "Checkpointing is not enabled for this job ("+id+").")
			return
		}
		s.file(w, "checkpoints-config.json")
	default:
		flinkError(w, http.StatusNotFound, "Not found: "+path)
	}
}

// file serves a fixture with its "${VAR}" placeholders replaced by JSON values.
func (s *Server) file(w http.ResponseWriter, name string) {
	b, err := fixtures.ReadFile("fixtures/flink-" + s.Job.Version + "/" + name)
	if err != nil {
		flinkError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := []byte(s.expand(string(b)))
	if len(s.Job.Vertices) > 0 && (name == "job.json" || name == "plan.json") {
		if out, err = withVertices(out, s.Job.Vertices); err != nil {
			flinkError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Write(out)
}

// withVertices rewrites the vertices of a JobDetailsInfo or JobPlanInfo, using the recorded
// first vertex, plan node and stream node as templates for the fields it does not set.
func withVertices(b []byte, vs []Vertex) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	clone := func(m any) map[string]any {
		out := map[string]any{}
		for k, v := range m.(map[string]any) {
			out[k] = v
		}
		return out
	}
	if list, ok := doc["vertices"].([]any); ok && len(list) > 0 {
		var out []any
		for _, v := range vs {
			m := clone(list[0])
			m["id"], m["name"], m["parallelism"], m["maxParallelism"] = v.ID, strings.Join(v.Operators, " -> "), v.Parallelism, v.MaxParallelism
			if t, ok := m["tasks"].(map[string]any); ok {
				t = clone(t)
				t["RUNNING"] = v.Parallelism
				m["tasks"] = t
			}
			out = append(out, m)
		}
		doc["vertices"] = out
	}
	if plan, ok := doc["plan"].(map[string]any); ok {
		if nodes, ok := plan["nodes"].([]any); ok && len(nodes) > 0 {
			var out []any
			for i, v := range vs {
				m := clone(nodes[0])
				m["id"], m["parallelism"], m["description"] = v.ID, v.Parallelism, strings.Join(v.Operators, " -> ")
				delete(m, "inputs")
				if i > 0 {
					m["inputs"] = []any{map[string]any{"num": 0, "id": vs[i-1].ID, "ship_strategy": "REBALANCE", "exchange": "pipelined_bounded"}}
				}
				out = append(out, m)
			}
			plan["nodes"] = out
		}
	}
	if sg, ok := doc["stream-graph"].(map[string]any); ok {
		var out []any
		n := 1
		for _, v := range vs {
			for j, op := range v.Operators {
				m := map[string]any{"id": fmt.Sprint(n), "parallelism": v.Parallelism, "operator": op, "description": op, "job_vertex_id": v.ID, "inputs": []any{}}
				if j > 0 {
					m["inputs"] = []any{map[string]any{"num": 0, "id": fmt.Sprint(n - 1), "ship_strategy": "FORWARD", "exchange": "UNDEFINED"}}
				}
				out = append(out, m)
				n++
			}
		}
		sg["nodes"] = out
	}
	return json.MarshalIndent(doc, "", "  ")
}

func (s *Server) expand(text string) string {
	j := s.Job
	now := s.now.UnixMilli()
	completedAt := now - j.Age.Milliseconds()
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	ck := func(name string) string {
		b, _ := fixtures.ReadFile("fixtures/flink-" + j.Version + "/" + name)
		return strings.TrimSpace(string(b))
	}
	completed, savepoint, total := "null", "null", 0
	if !j.NoCheckpoint {
		total = int(j.CheckpointID)
		if j.Savepoint {
			savepoint = ck("checkpoint-savepoint.json")
		} else {
			completed = ck("checkpoint-completed.json")
		}
	}
	// Two passes: the checkpoint objects carry placeholders of their own.
	first := strings.NewReplacer(`"${LATEST_COMPLETED}"`, completed, `"${LATEST_SAVEPOINT}"`, savepoint)
	second := strings.NewReplacer(
		`"${JOB_ID}"`, q(j.JobID),
		`"${NOW}"`, q(now),
		`"${START}"`, q(now-3_600_000),
		`"${UPTIME}"`, q(3_600_000),
		`"${CHECKPOINT_ID}"`, q(j.CheckpointID),
		`"${CHECKPOINT_PATH}"`, q(j.CheckpointPath),
		`"${TRIGGERED_AT}"`, q(completedAt-412),
		`"${COMPLETED_AT}"`, q(completedAt),
		`"${TOTAL}"`, q(total),
		`"${UNALIGNED}"`, q(j.Unaligned),
	)
	return second.Replace(first.Replace(text))
}

func flinkError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string][]string{"errors": {msg}})
}
