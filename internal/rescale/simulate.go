package rescale

import (
	"errors"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Simulate restores layout with plan the way Flink would. The error is a *PlanError when the plan
// cannot be applied (a key that names no operator, a parallelism ≤ 0 or > 32768, contradictory
// chains); Flink's own precondition failures are not errors but Result.Failures.
func Simulate(layout *checkpoint.Layout, plan Plan) (*Result, error) {
	return nil, errors.New("rescale: Simulate not implemented yet")
}

// Subtask computes what new subtask i receives.
func (o *OperatorAssignment) Subtask(i int) SubtaskAssignment {
	return SubtaskAssignment{Index: i}
}

// Share returns what new subtask i receives of the state.
func (d *StateDistribution) Share(i int) Share { return Share{} }

// Share returns what new subtask i receives of the keyed state.
func (k *KeyedDistribution) Share(i int) KeyedShare { return KeyedShare{} }

// Share returns what new subtask i receives of the channel state.
func (c *ChannelDistribution) Share(i int) ChannelShare { return ChannelShare{} }

type operatorSim struct{}
type stateDist struct{}
type keyedDist struct{}
type channelOld struct{}
