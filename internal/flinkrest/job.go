package flinkrest

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Job is what the REST API says about a job.
type Job struct {
	ID, Name, State string
	// FlinkVersion is the cluster's version (GET /config), e.g. "1.20.1"; empty if unknown.
	FlinkVersion string
	// Now is the JobManager's clock at the time of the call (JobDetailsInfo "now"), in ms.
	Now int64
	// Vertices in Flink's order.
	Vertices []Vertex
	// HasStreamGraph: the response carried Flink 2.x's stream graph, so Vertex.Operators is
	// exact; otherwise it is the vertex name split at " -> " (Flink 1.x chain names).
	HasStreamGraph bool
	// Checkpoints: latest completed, savepoint and restored. Nil when checkpointing is off.
	Checkpoints *CheckpointingStatistics
	// UnalignedCheckpoints from /checkpoints/config (nil: unknown).
	UnalignedCheckpoints *bool
}

// Vertex is one JobVertex.
type Vertex struct {
	ID             string
	Name           string
	Parallelism    int
	MaxParallelism int
	// Operators are the names of the operators chained into the vertex, head first: from the
	// stream graph (Flink 2.x) or from the chain name (1.x).
	Operators []string
}

// jobDetails is JobDetailsInfo (GET /jobs/:jobid), the fields used.
type jobDetails struct {
	JID      string `json:"jid"`
	Name     string `json:"name"`
	State    string `json:"state"`
	Now      int64  `json:"now"`
	Vertices []struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		MaxParallelism int    `json:"maxParallelism"`
		Parallelism    int    `json:"parallelism"`
	} `json:"vertices"`
	Plan        *jobPlan     `json:"plan"`
	StreamGraph *streamGraph `json:"stream-graph"`
}

// jobPlan is JobPlanInfo's plan (GET /jobs/:jobid/plan, and "plan" in JobDetailsInfo).
type jobPlan struct {
	Nodes []struct {
		ID          string `json:"id"`
		Parallelism int    `json:"parallelism"`
		Operator    string `json:"operator"`
		Description string `json:"description"`
		Inputs      []struct {
			ID           string `json:"id"`
			ShipStrategy string `json:"ship_strategy"`
		} `json:"inputs"`
	} `json:"nodes"`
}

// streamGraph is Flink 2.x's JSON stream graph: one node per operator, with its JobVertexID.
type streamGraph struct {
	Nodes []struct {
		ID          string `json:"id"`
		Parallelism int    `json:"parallelism"`
		Operator    string `json:"operator"`
		Description string `json:"description"`
		JobVertexID string `json:"job_vertex_id"`
	} `json:"nodes"`
}

// CheckpointingStatistics is GET /jobs/:jobid/checkpoints, the fields used.
type CheckpointingStatistics struct {
	Counts struct {
		Restored   int64 `json:"restored"`
		Total      int64 `json:"total"`
		InProgress int64 `json:"in_progress"`
		Completed  int64 `json:"completed"`
		Failed     int64 `json:"failed"`
	} `json:"counts"`
	Latest struct {
		Completed *CompletedCheckpoint `json:"completed"`
		Savepoint *CompletedCheckpoint `json:"savepoint"`
		Restored  *RestoredCheckpoint  `json:"restored"`
	} `json:"latest"`
}

// CompletedCheckpoint is CompletedCheckpointStatistics.
type CompletedCheckpoint struct {
	ID                 int64  `json:"id"`
	Status             string `json:"status"`
	IsSavepoint        bool   `json:"is_savepoint"`
	TriggerTimestamp   int64  `json:"trigger_timestamp"`
	LatestAckTimestamp int64  `json:"latest_ack_timestamp"`
	CheckpointType     string `json:"checkpoint_type"`
	ExternalPath       string `json:"external_path"`
	Discarded          bool   `json:"discarded"`
}

// RestoredCheckpoint is RestoredCheckpointStatistics.
type RestoredCheckpoint struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}

type checkpointConfig struct {
	Mode      string `json:"mode"`
	Unaligned *bool  `json:"unaligned_checkpoints"`
}

// Job reads the job's details, plan, checkpoints and checkpoint configuration.
func (c *Client) Job(ctx context.Context, jobID string) (*Job, error) {
	if !ValidJobID(jobID) {
		return nil, &Error{Kind: Invalid, Msg: fmt.Sprintf("job ID %q: want 32 hex characters", jobID)}
	}
	base := "/jobs/" + url.PathEscape(strings.ToLower(jobID))
	var d jobDetails
	if err := c.get(ctx, base, &d, fmt.Sprintf("job %s not found at %s", jobID, c.base)); err != nil {
		return nil, err
	}
	job := &Job{ID: d.JID, Name: d.Name, State: d.State, Now: d.Now}
	if job.ID == "" {
		job.ID = strings.ToLower(jobID)
	}
	// The plan is also in JobDetailsInfo; /plan is asked only when it is not.
	plan := d.Plan
	if plan == nil || len(plan.Nodes) == 0 {
		var p struct {
			Plan        *jobPlan     `json:"plan"`
			StreamGraph *streamGraph `json:"stream-graph"`
		}
		if err := c.get(ctx, base+"/plan", &p, "plan of job "+jobID+" not found"); err == nil {
			plan = p.Plan
			if d.StreamGraph == nil {
				d.StreamGraph = p.StreamGraph
			}
		} else if !IsKind(err, NotFound) {
			return nil, err
		}
	}
	byVertex := map[string][]string{}
	if sg := d.StreamGraph; sg != nil && len(sg.Nodes) > 0 {
		job.HasStreamGraph = true
		// Stream node IDs are assigned in topological creation order, so sorting by them puts a
		// chain's head before the operators chained to it.
		nodes := sg.Nodes
		sort.SliceStable(nodes, func(i, j int) bool { return atoiOr(nodes[i].ID) < atoiOr(nodes[j].ID) })
		for _, n := range nodes {
			if n.JobVertexID != "" {
				byVertex[strings.ToLower(n.JobVertexID)] = append(byVertex[strings.ToLower(n.JobVertexID)], n.Operator)
			}
		}
	}
	for _, v := range d.Vertices {
		vx := Vertex{ID: strings.ToLower(v.ID), Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism}
		if ops, ok := byVertex[vx.ID]; ok {
			vx.Operators = ops
		} else {
			vx.Operators = ChainNames(v.Name)
		}
		job.Vertices = append(job.Vertices, vx)
	}
	if len(job.Vertices) == 0 && plan != nil {
		// Archived jobs (history server) may lack vertex details; the plan still has them.
		for _, n := range plan.Nodes {
			job.Vertices = append(job.Vertices, Vertex{ID: strings.ToLower(n.ID), Name: n.Description, Parallelism: n.Parallelism, Operators: ChainNames(n.Description)})
		}
	}
	var cfg struct {
		Version string `json:"flink-version"`
	}
	if err := c.get(ctx, "/config", &cfg, "dashboard configuration not found"); err == nil {
		job.FlinkVersion = cfg.Version
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var cs CheckpointingStatistics
	switch err := c.get(ctx, base+"/checkpoints", &cs, "checkpointing is not enabled for job "+jobID); {
	case err == nil:
		job.Checkpoints = &cs
	case IsKind(err, NotFound):
		// Flink answers 404 when checkpointing is disabled; Latest then reports it.
	default:
		return nil, err
	}
	var cc checkpointConfig
	if err := c.get(ctx, base+"/checkpoints/config", &cc, "checkpointing is not enabled"); err == nil {
		job.UnalignedCheckpoints = cc.Unaligned
	} else if !IsKind(err, NotFound) {
		return nil, err
	}
	return job, nil
}

func atoiOr(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 1 << 30
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// ChainNames splits a Flink 1.x JobVertex name into the names of its chained operators. Flink
// names a chain by joining its operators' names with " -> " (StreamingJobGraphGenerator
// createChainedName); an optional "[index]:" prefix (pipeline.vertex-name-include-index-prefix)
// is dropped.
func ChainNames(name string) []string {
	if i := strings.Index(name, "]:"); strings.HasPrefix(name, "[") && i > 0 {
		name = name[i+2:]
	}
	var out []string
	for _, p := range strings.Split(name, " -> ") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Restorable is a checkpoint chosen to restore from.
type Restorable struct {
	ID           int64
	Savepoint    bool
	ExternalPath string // as Flink reports it
	// CompletedAt in ms since the epoch (latest acknowledgement, or the restore time for a
	// checkpoint only known as the one restored); 0 if unknown.
	CompletedAt int64
	// Age at the JobManager's "now"; -1 if unknown.
	Age time.Duration
	// Origin: "latest completed checkpoint", "latest savepoint" or "restored checkpoint".
	Origin string
	// Note says which candidates there were and why this one.
	Note string
}

// notAddressable is what Flink reports for checkpoints kept only in JobManager memory.
const notAddressable = "<checkpoint-not-externally-addressable>"

// Latest chooses the newest restorable checkpoint: the latest completed checkpoint or savepoint
// with the highest checkpoint ID (one counter numbers both), skipping discarded ones and ones
// without an external path; the checkpoint the job restored from only when nothing completed
// since. No candidate is a FailedPrecondition error.
func (j *Job) Latest() (Restorable, error) {
	if j.Checkpoints == nil {
		return Restorable{}, &Error{Kind: FailedPrecondition, Msg: fmt.Sprintf("job %s has checkpointing disabled: there is no checkpoint to restore from", j.ID)}
	}
	cs := j.Checkpoints
	var cands []Restorable
	var skipped []string
	add := func(c *CompletedCheckpoint, origin string) {
		if c == nil {
			return
		}
		switch {
		case c.Discarded:
			skipped = append(skipped, fmt.Sprintf("%s %d (discarded)", origin, c.ID))
		case c.ExternalPath == "" || c.ExternalPath == notAddressable:
			skipped = append(skipped, fmt.Sprintf("%s %d (not externally addressable: JobManager checkpoint storage)", origin, c.ID))
		default:
			cands = append(cands, Restorable{ID: c.ID, Savepoint: c.IsSavepoint, ExternalPath: c.ExternalPath, CompletedAt: c.LatestAckTimestamp, Origin: origin})
		}
	}
	add(cs.Latest.Completed, "latest completed checkpoint")
	add(cs.Latest.Savepoint, "latest savepoint")
	if len(cands) == 0 {
		if r := cs.Latest.Restored; r != nil && r.ExternalPath != "" && r.ExternalPath != notAddressable {
			cands = append(cands, Restorable{ID: r.ID, Savepoint: r.IsSavepoint, ExternalPath: r.ExternalPath, CompletedAt: r.RestoreTimestamp, Origin: "restored checkpoint"})
		}
	}
	if len(cands) == 0 {
		msg := fmt.Sprintf("job %s has no completed checkpoint or savepoint to restore from (%d completed, %d in progress, %d failed",
			j.ID, cs.Counts.Completed, cs.Counts.InProgress, cs.Counts.Failed)
		if len(skipped) > 0 {
			msg += "; skipped: " + strings.Join(skipped, ", ")
		}
		return Restorable{}, &Error{Kind: FailedPrecondition, Msg: msg + "); wait for a checkpoint or trigger a savepoint"}
	}
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].ID > cands[b].ID })
	best := cands[0]
	best.Age = -1
	if best.CompletedAt > 0 && j.Now >= best.CompletedAt {
		best.Age = time.Duration(j.Now-best.CompletedAt) * time.Millisecond
	}
	kind := "checkpoint"
	if best.Savepoint {
		kind = "savepoint"
	}
	note := fmt.Sprintf("%s %d of job %s (%s)", kind, best.ID, j.ID, best.Origin)
	if best.Age >= 0 {
		note += fmt.Sprintf(", completed %s ago", best.Age.Round(time.Second))
	}
	if len(cands) > 1 {
		var others []string
		for _, c := range cands[1:] {
			others = append(others, fmt.Sprintf("%s %d", c.Origin, c.ID))
		}
		note += "; newer than " + strings.Join(others, ", ")
	}
	if len(skipped) > 0 {
		note += "; skipped " + strings.Join(skipped, ", ")
	}
	if j.UnalignedCheckpoints != nil && *j.UnalignedCheckpoints {
		// The REST plan's ship strategies do not determine the channel-state mappers (a "HASH"
		// edge may be RANGE or ARBITRARY), so none are derived: the check reports channel state
		// it cannot simulate, and the plan's input/output mappers can name them.
		note += "; unaligned checkpoints are on: the checkpoint may hold in-flight data"
	}
	best.Note = note
	return best, nil
}

// Vertex returns the vertex with the given ID (hex, any case).
func (j *Job) Vertex(id string) (Vertex, bool) {
	for _, v := range j.Vertices {
		if strings.EqualFold(v.ID, id) {
			return v, true
		}
	}
	return Vertex{}, false
}
