package admission

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// APIVersion is the operator's served API version that Preflight reads.
const APIVersion = "flink.apache.org/v1beta1"

// The kinds of the Flink Kubernetes Operator that carry a job.
const (
	KindDeployment = "FlinkDeployment"
	KindSessionJob = "FlinkSessionJob"
)

// Flink and operator configuration keys read from spec.flinkConfiguration.
const (
	keyParallelismDefault = "parallelism.default"
	keyOverrides          = "pipeline.jobvertex-parallelism-overrides" // PipelineOptions.PARALLELISM_OVERRIDES
	keySchedulerMode      = "scheduler-mode"                           // JobManagerOptions.SCHEDULER_MODE
	keySlots              = "taskmanager.numberOfTaskSlots"
	keyRESTPort           = "rest.port"
)

// Resource is a FlinkDeployment or FlinkSessionJob, the fields admission reads. Field names are
// the operator's CRD's (FlinkDeploymentSpec, FlinkSessionJobSpec, JobSpec, JobStatus,
// ReconciliationStatus).
type Resource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec   Spec `json:"spec"`
	Status struct {
		JobStatus struct {
			JobID string `json:"jobId"`
			State string `json:"state"`
			// UpgradeSavepointPath: operators up to 1.9; UpgradeSnapshotReference from 1.10.
			UpgradeSavepointPath     string `json:"upgradeSavepointPath"`
			UpgradeSnapshotReference *struct {
				Path string `json:"path"`
			} `json:"upgradeSnapshotReference"`
		} `json:"jobStatus"`
		ReconciliationStatus struct {
			LastReconciledSpec string `json:"lastReconciledSpec"`
		} `json:"reconciliationStatus"`
	} `json:"status"`
}

// Spec is FlinkDeploymentSpec or FlinkSessionJobSpec, the fields admission reads.
type Spec struct {
	Job                *JobSpec        `json:"job"`
	FlinkConfiguration json.RawMessage `json:"flinkConfiguration"`
	DeploymentName     string          `json:"deploymentName"` // FlinkSessionJob: the session cluster
	TaskManager        *struct {
		Replicas *int `json:"replicas"`
	} `json:"taskManager"`
	Mode string `json:"mode"` // native (default) or standalone
}

// JobSpec is the operator's JobSpec, the fields admission reads.
type JobSpec struct {
	Parallelism          int    `json:"parallelism"`
	UpgradeMode          string `json:"upgradeMode"` // savepoint, last-state, stateless
	State                string `json:"state"`       // running, suspended
	InitialSavepointPath string `json:"initialSavepointPath"`
}

// Error is a resource admission cannot read: Field names the JSON path.
type Error struct {
	Field string
	Msg   string
}

func (e *Error) Error() string { return "admission: " + e.Field + ": " + e.Msg }

// Parse decodes a resource and checks its kind and API version.
func Parse(b []byte) (*Resource, error) {
	var r Resource
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &Error{Field: "(resource)", Msg: err.Error()}
	}
	if r.Kind != KindDeployment && r.Kind != KindSessionJob {
		return nil, &Error{Field: "kind", Msg: fmt.Sprintf("%q: want %s or %s", r.Kind, KindDeployment, KindSessionJob)}
	}
	if r.APIVersion != APIVersion {
		return nil, &Error{Field: "apiVersion", Msg: fmt.Sprintf("%q: want %s", r.APIVersion, APIVersion)}
	}
	if r.Metadata.Name == "" {
		return nil, &Error{Field: "metadata.name", Msg: "empty"}
	}
	return &r, nil
}

// lastSpec decodes status.reconciliationStatus.lastReconciledSpec: {"spec": …,
// "resource_metadata": …} as the operator writes it (SpecUtils.writeSpecWithMeta), or the bare
// spec of older operators. Nil when the resource was never reconciled.
func (r *Resource) lastSpec() (*Spec, error) {
	s := r.Status.ReconciliationStatus.LastReconciledSpec
	if s == "" {
		return nil, nil
	}
	var wrapper struct {
		Spec *Spec `json:"spec"`
	}
	const field = "status.reconciliationStatus.lastReconciledSpec"
	if err := json.Unmarshal([]byte(s), &wrapper); err != nil {
		return nil, &Error{Field: field, Msg: err.Error()}
	}
	if wrapper.Spec != nil {
		return wrapper.Spec, nil
	}
	var bare Spec
	if err := json.Unmarshal([]byte(s), &bare); err != nil {
		return nil, &Error{Field: field, Msg: err.Error()}
	}
	return &bare, nil
}

// config flattens spec.flinkConfiguration into Flink's dotted keys. The CRD's map of strings is
// the usual form; operators from 1.11 also accept nested YAML, whose paths join with dots.
func (s *Spec) config() (map[string]string, error) {
	out := map[string]string{}
	if len(s.FlinkConfiguration) == 0 || string(s.FlinkConfiguration) == "null" {
		return out, nil
	}
	var m map[string]any
	if err := json.Unmarshal(s.FlinkConfiguration, &m); err != nil {
		return nil, &Error{Field: "spec.flinkConfiguration", Msg: err.Error()}
	}
	flatten("", m, out, 0)
	return out, nil
}

func flatten(prefix string, m map[string]any, out map[string]string, depth int) {
	if depth > 16 {
		return
	}
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		switch v := v.(type) {
		case map[string]any:
			flatten(key, v, out, depth+1)
		case string:
			out[key] = v
		case nil:
		default:
			b, _ := json.Marshal(v)
			out[key] = string(b)
		}
	}
}

// settings are what decides a job's parallelism in one spec.
type settings struct {
	job       int            // spec.job.parallelism
	deflt     int            // parallelism.default
	reactive  int            // slots × replicas in reactive mode; 0 otherwise
	overrides map[string]int // lower-case JobVertexID → parallelism
}

// jobWide is the parallelism of a vertex without an override: reactive mode's slots, else the
// job's parallelism, else parallelism.default; 0 when the spec sets none.
func (s settings) jobWide() int {
	switch {
	case s.reactive > 0:
		return s.reactive
	case s.job > 0:
		return s.job
	}
	return s.deflt
}

func (s settings) equal(o settings) bool {
	if s.jobWide() != o.jobWide() || len(s.overrides) != len(o.overrides) {
		return false
	}
	for k, v := range s.overrides {
		if w, ok := o.overrides[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// settingsOf reads a spec's parallelism settings; field paths in errors start at prefix.
func settingsOf(s *Spec, prefix string) (settings, error) {
	st := settings{overrides: map[string]int{}}
	if s.Job != nil && s.Job.Parallelism != 0 {
		if s.Job.Parallelism < 0 || s.Job.Parallelism > maxParallelism {
			return st, &Error{Field: prefix + ".job.parallelism", Msg: fmt.Sprintf("%d: want 1 to %d", s.Job.Parallelism, maxParallelism)}
		}
		st.job = s.Job.Parallelism
	}
	cfg, err := s.config()
	if err != nil {
		return st, err
	}
	if v, ok := cfg[keyParallelismDefault]; ok {
		if st.deflt, err = positive(v, prefix+".flinkConfiguration."+keyParallelismDefault); err != nil {
			return st, err
		}
	}
	if v := cfg[keyOverrides]; v != "" {
		if st.overrides, err = parseOverrides(v, prefix+".flinkConfiguration."+keyOverrides); err != nil {
			return st, err
		}
	}
	if strings.EqualFold(strings.TrimSpace(cfg[keySchedulerMode]), "reactive") {
		slots := 1
		if v, ok := cfg[keySlots]; ok {
			if slots, err = positive(v, prefix+".flinkConfiguration."+keySlots); err != nil {
				return st, err
			}
		}
		replicas := 1
		if s.TaskManager != nil && s.TaskManager.Replicas != nil {
			replicas = *s.TaskManager.Replicas
		}
		if replicas < 1 || replicas > maxParallelism {
			return st, &Error{Field: prefix + ".taskManager.replicas", Msg: fmt.Sprintf("%d: want 1 to %d", replicas, maxParallelism)}
		}
		// Reactive mode runs every vertex at all slots, up to its max parallelism (the checks
		// see a proposal above it and say so).
		st.reactive = min(slots*replicas, maxParallelism)
	}
	return st, nil
}

// parseOverrides reads Flink's map format "vertexId:parallelism,vertexId:parallelism".
func parseOverrides(v, field string) (map[string]int, error) {
	out := map[string]int{}
	for i, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, p, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, &Error{Field: fmt.Sprintf("%s[%d]", field, i), Msg: fmt.Sprintf("%q: want vertexId:parallelism", entry)}
		}
		n, err := positive(p, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out[strings.ToLower(strings.TrimSpace(id))] = n
	}
	return out, nil
}

// maxParallelism is Flink's upper bound of any parallelism (KeyGroupRangeAssignment
// UPPER_BOUND_MAX_PARALLELISM).
const maxParallelism = 1 << 15

func positive(v, field string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 || n > maxParallelism {
		return 0, &Error{Field: field, Msg: fmt.Sprintf("%q: want an integer from 1 to %d", v, maxParallelism)}
	}
	return n, nil
}

// port is spec.flinkConfiguration["rest.port"], or Flink's default 8081.
func (s *Spec) port() string {
	cfg, err := s.config()
	if err == nil {
		// A TCP port, not a parallelism: ports above maxParallelism (32768) are common.
		if p, err := strconv.Atoi(strings.TrimSpace(cfg[keyRESTPort])); err == nil && p > 0 && p < 1<<16 {
			return strconv.Itoa(p)
		}
	}
	return "8081"
}
