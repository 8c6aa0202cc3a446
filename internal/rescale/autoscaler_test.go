package rescale

import (
	"math"
	"testing"
)

// §7 A9: JobVertexScalerTest (flink-kubernetes-operator release-1.15.0).
func TestA9Autoscaler(t *testing.T) {
	const inf = math.MaxInt32
	type kind int
	const (
		plain kind = iota
		hash
		src
	)
	tests := []struct {
		k                kind
		cur, parts, maxP int
		factor           float64
		lo, hi           int
		maximize         bool
		want             int
	}{
		{plain, 1, 0, 720, 0.0001, 1, inf, false, 1},
		{plain, 2, 0, 720, 0.1, 1, inf, false, 1},
		{plain, 6, 0, 720, 0.8, 1, inf, false, 5},
		{plain, 16, 0, 128, 1.5, 1, inf, false, 24},
		{plain, 200, 0, 720, 2, 1, inf, false, 400},
		{plain, 200, 0, 720, math.Inf(1), 1, inf, false, 720},
		{hash, 6, 0, 36, 0.8, 1, inf, false, 6},
		{hash, 16, 0, 128, 1.5, 1, inf, false, 32},
		{hash, 200, 0, 720, 1.3, 1, inf, false, 360},
		{hash, 200, 0, 720, math.Inf(1), 1, inf, false, 720},
		{hash, 10, 0, 128, 2.5, 1, inf, false, 32},
		{hash, 10, 0, 128, 2.5, 1, 128, true, 26},
		{hash, 6, 0, 720, 0.8, 1, 700, false, 5},
		{hash, 8, 0, 720, 0.8, 8, 700, false, 8},
		{hash, 16, 0, 128, 1.5, 60, inf, false, 64},
		{hash, 200, 0, 720, 2, 1, 300, false, 240},
		{hash, 200, 0, 720, math.Inf(1), 1, 600, false, 360},
		{src, 6, 15, 128, 0.4, 1, inf, false, 3},
		{src, 7, 15, 128, 1.2, 1, inf, false, 15},
		{src, 20, 35, 30, 0.9, 1, inf, false, 18},
		{src, 22, 35, 30, 1.1, 20, inf, false, 22},
		{src, 80, 200, 128, 1.4, 1, inf, false, 100},
		{src, 24, 199, inf, 4, 1, inf, false, 199},
		{src, 24, 199, inf, 4, 1, inf, true, 100},
	}
	for i, tc := range tests {
		got, _, err := AutoscalerParallelism(AutoscalerInput{Current: tc.cur, HashInput: tc.k == hash,
			NumSourcePartitions: tc.parts, MaxParallelism: tc.maxP, ScaleFactor: tc.factor, Lower: tc.lo, Upper: tc.hi,
			MaximizeUtilisation: tc.maximize})
		if err != nil || got != tc.want {
			t.Errorf("row %d %+v: got %d (%v), want %d", i, tc, got, err, tc.want)
		}
	}
	if _, _, err := AutoscalerParallelism(AutoscalerInput{Current: 1, Lower: 500, Upper: 499}); err == nil {
		t.Error("lower 500 > upper 499 must fail")
	}
}
