package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// keyedSkew is PF140.
var keyedSkew = RuleMeta{
	ID:       "PF140",
	Title:    "Keyed state unevenly spread over the new subtasks",
	Severity: Warning,
	Grading: "INFO from a max/mean of 1.25 (key groups) or 1.5 (bytes); WARNING from a byte max/mean of 2 " +
		"with at least 1 MiB of keyed state.",
	Cause: "Keyed state moves in key groups: subtask i of p owns key groups [ceil(i*maxP/p), floor(((i+1)*maxP-1)/p)]. " +
		"When maxP is not a multiple of p some subtasks own one more key group; when key groups differ in size " +
		"the busiest subtask restores and processes more than the mean.",
	Remedies:   []Remedy{{Text: "Prefer a parallelism that divides the max parallelism, and check the key distribution if the byte skew persists."}},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/production_ready/#set-an-explicit-max-parallelism"},
}

func init() { register(&Rule{meta: &keyedSkew, check: checkKeyedSkew}) }

// checkKeyedSkew (PF140): keyed state spreads unevenly over the new subtasks, by key groups or
// by bytes.
func checkKeyedSkew(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		if (op.ManagedKeyed == nil && op.RawKeyed == nil) || v.NewParallelism <= 1 || v.MaxParallelism <= 0 || op.Path == rescale.PathFinished ||
			v.NewParallelism > v.MaxParallelism || (op.CheckpointMaxParallelism > 0 && v.NewParallelism > op.CheckpointMaxParallelism) {
			return
		}
		mean := float64(v.MaxParallelism) / float64(v.NewParallelism)
		most := (v.MaxParallelism + v.NewParallelism - 1) / v.NewParallelism
		kgRatio := float64(most) / mean
		s := op.Summary
		var sev Severity
		var msg string
		var affected []int32
		switch {
		case s.KeyedSkew >= 1.5 && s.KeyedBytes > 0:
			sev = Info
			if s.KeyedSkew >= 2 && s.KeyedBytes >= 1<<20 {
				sev = Warning
			}
			for i := 0; i < v.NewParallelism; i++ {
				c.stop.Check()
				if float64(keyedOwned(op, i)) >= 1.5*s.KeyedMeanOwnedBytes {
					affected = append(affected, int32(i))
				}
			}
			msg = fmt.Sprintf("At parallelism %d the keyed state of %s (%s) is skewed: the largest subtask owns %s against a mean of %s (max/mean %.2f).",
				v.NewParallelism, opLabel(op, c.Entry(op)), bytesText(s.KeyedBytes), bytesText(s.KeyedMaxOwnedBytes), bytesText(int64(s.KeyedMeanOwnedBytes)), s.KeyedSkew)
		case kgRatio >= 1.25:
			sev = Info
			for i := 0; i < v.NewParallelism; i++ {
				if v.KeyGroupRange(i).NumKeyGroups == most {
					affected = append(affected, int32(i))
				}
			}
			msg = fmt.Sprintf("At parallelism %d with max parallelism %d, %s of %s %s against a mean of %.2f (max/mean %.2f).",
				v.NewParallelism, v.MaxParallelism, subtasksText(affected), opLabel(op, c.Entry(op)), verbFor(len(affected), "owns", "own")+" "+units.Plural(int64(most), "key group"), mean, kgRatio)
		default:
			return
		}
		f := c.finding(&keyedSkew, sev, op)
		f.AffectedSubtasks = affected
		f.Message = msg
		f.Remediation = keyedSkew.remedy("")
		f.References = keyedSkew.refs()
		out = append(out, f)
	})
	return out
}
