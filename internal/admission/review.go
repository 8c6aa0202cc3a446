// Package admission decides whether a change to a Flink Kubernetes Operator resource
// (FlinkDeployment or FlinkSessionJob, flink.apache.org/v1beta1) may be applied: it reads the old
// and new parallelism of every vertex from the spec and status.reconciliationStatus
// .lastReconciledSpec, skips what restores no state, hands the proposal to a Backend (the
// daemon's Decide path: Flink REST discovery, the checkpoint, the engine) and words the answer
// for a person reading kubectl. It owns no HTTP, no Kubernetes envelope and no check of its own.
package admission

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/flinkpreflight/preflight/internal/fold"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Defaults.
const (
	DefaultRESTTemplate = "http://{name}-rest.{namespace}:{port}"
	DefaultTimeout      = 5 * time.Second
)

// Config is an admission's policy.
type Config struct {
	// RESTTemplate is the JobManager REST URL of a resource: {name} (the FlinkDeployment, or a
	// FlinkSessionJob's deploymentName), {namespace}, {port} (rest.port, default 8081).
	RESTTemplate string
	// FailClosed denies a change that could not be checked; otherwise it is allowed with a
	// warning.
	FailClosed bool
	// Timeout bounds the whole answer (0: DefaultTimeout).
	Timeout time.Duration
}

// Backend runs the check: reads the job and its checkpoint (or the savepoint) at t, asks propose
// for the new parallelism of the vertices it found, and decides. An empty proposal is answered
// with an approval and no vertices.
type Backend interface {
	Decide(ctx context.Context, t Target, propose func([]Vertex) map[string]int32) (*pb.DecideResponse, error)
}

// Answer is the admission decision.
type Answer struct {
	Allowed  bool
	Code     int32  // HTTP status for a denial: 403 unsafe, 500 not checked (fail-closed)
	Message  string // what kubectl prints
	Warnings []string
	Checked  bool // the backend was called
}

// Review decides on one resource (JSON).
func Review(ctx context.Context, raw []byte, cfg Config, b Backend) Answer {
	if cfg.RESTTemplate == "" {
		cfg.RESTTemplate = DefaultRESTTemplate
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	r, err := Parse(raw)
	if err != nil {
		return failure(cfg, "", err)
	}
	c, err := Plan(r, cfg.RESTTemplate)
	if err != nil {
		return failure(cfg, "", err)
	}
	if c.Skip != "" {
		return Answer{Allowed: true, Message: "Preflight: not checked: " + c.Skip + "."}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	resp, err := b.Decide(ctx, c.Target, c.Proposal)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v: %w", cfg.Timeout, err)
	}
	if err != nil {
		a := failure(cfg, c.Target.Host(), err)
		a.Checked = true
		return a
	}
	a := verdict(c, resp)
	a.Checked = true
	return a
}

// failure answers a change that could not be checked, by the policy.
func failure(cfg Config, host string, err error) Answer {
	where := ""
	if host != "" {
		where = " (reading " + host + ")"
	}
	msg := "Preflight could not check the parallelism change" + where + ": " + err.Error()
	if cfg.FailClosed {
		return Answer{Allowed: false, Code: 500, Message: msg + ". Denied: the failure policy is closed."}
	}
	return Answer{Allowed: true, Message: msg, Warnings: []string{msg + ". Allowed: the failure policy is open."}}
}

var jiraID = regexp.MustCompile(`FLINK-[0-9]+`)

// verdict words a decision: one line per vertex, each finding's rule and JIRA id, and the
// nearest safe parallelism.
func verdict(c *Change, resp *pb.DecideResponse) Answer {
	what := fmt.Sprintf("%s %s/%s", c.Kind, c.Namespace, c.Name)
	from := resp.GetCheckpoint()
	if ch := resp.GetCheckpointChoice(); ch != nil && ch.GetCheckpointId() > 0 {
		from = fmt.Sprintf("%s %d (%s)", ch.GetKind(), ch.GetCheckpointId(), ch.GetUri())
	}
	var lines, warnings []string
	denied := false
	js := indexJiras(resp.GetFindings())
	for _, v := range resp.GetVertices() {
		if v.GetAction() == pb.DecisionAction_DECISION_ACTION_APPROVE {
			continue
		}
		denied = true
		lines = append(lines, vertexLine(v, js))
	}
	if n := resp.GetCheckpointNote(); n != "" {
		warnings = append(warnings, "Preflight: "+n)
	}
	if !denied {
		msg := fmt.Sprintf("Preflight allowed the parallelism change of %s", what)
		if from != "" {
			msg += ": restoring " + from + " at the new parallelism is safe."
		} else {
			msg += ": no vertex with state changes parallelism."
		}
		return Answer{Allowed: true, Message: msg, Warnings: warnings}
	}
	msg := fmt.Sprintf("Preflight denied the parallelism change of %s: restoring %s at the new parallelism fails.\n%s",
		what, from, strings.Join(lines, "\n"))
	return Answer{Allowed: false, Code: 403, Message: msg, Warnings: warnings}
}

func vertexLine(v *pb.VertexDecision, js jiras) string {
	name := v.GetName()
	if name == "" {
		name = v.GetVertexId()
	}
	var rules []string
	for _, id := range v.GetFindingIds() {
		rule := id
		if j := js.of(id, v.GetVertexId()); j != "" {
			rule += " (" + j + ")"
		}
		rules = append(rules, rule)
	}
	safe := fmt.Sprintf("keep %d", v.GetCurrentParallelism())
	if v.GetAction() == pb.DecisionAction_DECISION_ACTION_ADJUST {
		safe = fmt.Sprintf("nearest safe parallelism %d", v.GetParallelism())
	}
	line := fmt.Sprintf("- vertex %q (%s): %d -> %d: %s", name, v.GetVertexId(), v.GetCurrentParallelism(), v.GetProposedParallelism(), strings.Join(rules, ", "))
	if r := v.GetReason(); r != "" {
		line += ": " + strings.TrimSuffix(r, ".")
	}
	return line + ". Nearest safe parallelism: " + safe + "."
}

// jiras are the Flink JIRA ids the findings cite, per rule: the first finding's, and the first
// on each vertex. Read once, so that wording the lines of many vertices does not scan (and match)
// every finding per vertex.
type jiras struct {
	first    map[string]string    // rule → id
	onVertex map[[2]string]string // {rule, fold.Key(vertex ID)} → id
}

func indexJiras(fs []*pb.Finding) jiras {
	js := jiras{first: map[string]string{}, onVertex: map[[2]string]string{}}
	for _, f := range fs {
		text := strings.Join(append([]string{f.GetCatalogEntry(), f.GetTitle(), f.GetMessage()}, f.GetReferences()...), " ")
		j := jiraID.FindString(text)
		if j == "" {
			continue
		}
		if _, ok := js.first[f.GetRuleId()]; !ok {
			js.first[f.GetRuleId()] = j
		}
		if k := [2]string{f.GetRuleId(), fold.Key(f.GetVertexId())}; js.onVertex[k] == "" {
			js.onVertex[k] = j
		}
	}
	return js
}

// of is the Flink JIRA id a finding of the rule cites, preferring a finding on the vertex.
func (js jiras) of(rule, vertex string) string {
	if j := js.onVertex[[2]string{rule, fold.Key(vertex)}]; j != "" {
		return j
	}
	return js.first[rule]
}
