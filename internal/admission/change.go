package admission

import (
	"net/url"
	"strings"
)

// Target is where the state the job restores from is read: the job through Flink's REST API (its
// newest restorable checkpoint), or a savepoint the resource names.
type Target struct {
	RESTURL   string // with JobID
	JobID     string
	Savepoint string // when no job runs yet: initialSavepointPath or the operator's upgrade path
}

// Host names where Target reads from, for messages.
func (t Target) Host() string {
	raw := t.RESTURL
	if t.JobID == "" {
		raw = t.Savepoint
	}
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// Vertex is one JobVertex of the running job (REST), or one operator of the savepoint.
type Vertex struct {
	ID          string // JobVertexID (or OperatorID) hex
	Parallelism int    // now
}

// Change is a resource's parallelism change and where to check it. Skip says why nothing needs
// checking (then nothing is called).
type Change struct {
	Kind, Namespace, Name string
	old, new              settings
	Target                Target
	Skip                  string
}

// Plan reads a resource's change: spec against status.reconciliationStatus.lastReconciledSpec.
func Plan(r *Resource, restTemplate string) (*Change, error) {
	c := &Change{Kind: r.Kind, Namespace: r.Metadata.Namespace, Name: r.Metadata.Name}
	job := r.Spec.Job
	switch {
	case job == nil:
		c.Skip = "the resource runs no job"
		return c, nil
	case strings.EqualFold(job.UpgradeMode, "stateless"):
		c.Skip = "upgradeMode is stateless: the job starts without state"
		return c, nil
	case strings.EqualFold(job.State, "suspended"):
		c.Skip = "the job is suspended"
		return c, nil
	}
	var err error
	if c.new, err = settingsOf(&r.Spec, "spec"); err != nil {
		return nil, err
	}
	last, err := r.lastSpec()
	if err != nil {
		return nil, err
	}
	if last != nil {
		if c.old, err = settingsOf(last, "lastReconciledSpec"); err != nil {
			return nil, err
		}
		if c.old.equal(c.new) {
			c.Skip = "the change touches no parallelism"
			return c, nil
		}
	}
	c.Target = target(r, restTemplate)
	if c.Target.JobID == "" && c.Target.Savepoint == "" {
		c.Skip = "no job ID yet and no savepoint named: nothing to restore"
	}
	return c, nil
}

func target(r *Resource, tmpl string) Target {
	js := r.Status.JobStatus
	if js.JobID != "" {
		name := r.Metadata.Name
		if r.Kind == KindSessionJob {
			name = r.Spec.DeploymentName
		}
		u := strings.NewReplacer("{name}", name, "{namespace}", r.Metadata.Namespace, "{port}", r.Spec.port()).Replace(tmpl)
		return Target{RESTURL: u, JobID: js.JobID}
	}
	switch {
	case js.UpgradeSnapshotReference != nil && js.UpgradeSnapshotReference.Path != "":
		return Target{Savepoint: js.UpgradeSnapshotReference.Path}
	case js.UpgradeSavepointPath != "":
		return Target{Savepoint: js.UpgradeSavepointPath}
	case r.Spec.Job.InitialSavepointPath != "":
		return Target{Savepoint: r.Spec.Job.InitialSavepointPath}
	}
	return Target{}
}

// Proposal is the new parallelism of every vertex whose parallelism changes. A vertex takes its
// override when the new spec has one; otherwise it follows the job-wide parallelism if it did
// before: it had an override that is gone, or it runs at the old job-wide parallelism (a vertex
// at another parallelism has one set in the job's code, which the spec does not change). Without
// a previous spec every vertex follows.
func (c *Change) Proposal(vs []Vertex) map[string]int32 {
	out := map[string]int32{}
	oldWide, newWide := c.old.jobWide(), c.new.jobWide()
	for _, v := range vs {
		id := strings.ToLower(v.ID)
		p, ok := c.new.overrides[id]
		if !ok {
			_, had := c.old.overrides[id]
			if newWide == 0 || !(had || oldWide == 0 || v.Parallelism == oldWide) {
				continue
			}
			p = newWide
		}
		if p != v.Parallelism {
			out[v.ID] = int32(p)
		}
	}
	return out
}
