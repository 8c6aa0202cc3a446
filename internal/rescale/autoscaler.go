package rescale

import (
	"errors"
	"math"
)

// AutoscalerInput is what the flink-kubernetes-operator autoscaler's JobVertexScaler.scale uses
// to pick a vertex's parallelism (§6.1, release-1.15.0).
type AutoscalerInput struct {
	Current int // current parallelism
	// HashInput: the vertex has a HASH (keyBy) input.
	HashInput bool
	// NumSourcePartitions is a source's partition count (0 unknown or not a source).
	NumSourcePartitions int
	// MaxParallelism is the vertex's max parallelism as REST reports it (math.MaxInt32 for none).
	MaxParallelism int
	// ScaleFactor is target capacity / true processing rate (after clamping by the caller);
	// +Inf is allowed.
	ScaleFactor float64
	// Lower and Upper are the parallelism limits (vertex.min-parallelism, vertex.max-parallelism).
	Lower, Upper int
	// MaximizeUtilisation selects scaling.key-group.partitions.adjust.mode=MAXIMIZE_UTILISATION
	// instead of the default EVENLY_SPREAD.
	MaximizeUtilisation bool
}

// AutoscalerParallelism emulates JobVertexScaler.scale: the new parallelism and whether the
// autoscaler reports it as limited ("ScalingLimited": the aligned value differs from the computed
// one, or the scaling was blocked). An error means Lower > Upper.
func AutoscalerParallelism(in AutoscalerInput) (int, bool, error) {
	if in.Lower > in.Upper {
		return 0, false, errors.New("the lower parallelism limit is above the upper limit")
	}
	cur := in.Current
	raw := math.Min(math.Ceil(in.ScaleFactor*float64(cur)), math.MaxInt32)
	newP := int(raw)
	upper := min(in.MaxParallelism, in.Upper)
	newP = min(max(in.Lower, newP), upper)
	if !(in.NumSourcePartitions > 0 || in.HashInput) {
		return newP, false, nil
	}
	n := in.MaxParallelism
	if in.NumSourcePartitions > 0 {
		n = in.NumSourcePartitions
	}
	ub := min(n, upper)
	if newP == cur {
		return cur, false, nil
	}
	up := newP > cur
	limit := ub
	if !up {
		limit = min(cur, ub)
	}
	p := -1
	for q := newP; q <= limit; q++ {
		if n%q == 0 || in.MaximizeUtilisation && n/q < n/newP {
			p = q
			break
		}
	}
	if p < 0 {
		q := newP
		for q > 1 && n/q <= n/newP {
			q--
		}
		if n%q != 0 {
			q++
		}
		p = max(q, in.Lower)
	}
	if up && p <= cur || !up && p >= cur {
		return cur, true, nil
	}
	return p, p != newP, nil
}
