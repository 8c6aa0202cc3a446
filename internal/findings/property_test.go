package findings

import (
	"math/rand/v2"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// randomStates are the state names random jobs draw from: catalog names (SPLIT and UNION) and
// unknown ones.
var randomStates = []namedState{
	{"expired-files", checkpoint.SplitDistribute}, {"SourceReaderState", checkpoint.SplitDistribute},
	{"topic-partition-offset-states", checkpoint.Union}, {"my-list", checkpoint.SplitDistribute},
	{"next-transactional-id-hint-v2", checkpoint.Union}, {"file-monitoring-state", checkpoint.SplitDistribute},
	{"u", checkpoint.Union},
}

// TestRandomPlansProperties runs random checkpoints (catalog and unknown state names, SPLIT
// and UNION, keyed state) under random plans and checks the report's invariants: findings are
// ordered, the verdict follows from them, every vertex with a denying finding has a safe entry,
// and re-checking the plan at a reported safe parallelism gives that vertex no denying finding.
func TestRandomPlansProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(propSeed, 11))
	names := randomStates
	iterations := propIterations
	if testing.Short() {
		iterations = 30
	}
	for it := 0; it < iterations; it++ {
		ops := randomOps{maxOps: 3, maxP: 6, maxPs: []int{1, 8, 128}, coordOneIn: 2, stateOneIn: 4, maxElements: 3, maxSize: 64}.draw(rng, names)
		l := layoutOf(t, 5, ops...)
		plan := rescale.Plan{Parallelism: map[string]int{}}
		for _, op := range ops {
			if rng.IntN(2) == 0 {
				plan.Parallelism[op.uid] = 1 + rng.IntN(12)
			}
		}
		opts := Options{RPCFrameSize: int64(1+rng.IntN(4)) << 10, FailLevel: []Severity{Error, Warning}[rng.IntN(2)]}
		rep := check(t, l, plan, nil, opts)
		for i := 1; i < len(rep.Findings); i++ {
			if rep.Findings[i].Severity > rep.Findings[i-1].Severity {
				t.Fatalf("it %d: unordered findings\n%s", it, dump(rep))
			}
		}
		if rep.Verdict != verdictOf(rep.Findings, opts.FailLevel) {
			t.Fatalf("it %d: verdict", it)
		}
		denying := map[string]bool{}
		for _, f := range rep.Findings {
			if f.Severity >= opts.failLevel() && f.VertexID != "" {
				denying[f.VertexID] = true
			}
		}
		if len(rep.Safe) != len(denying) {
			t.Fatalf("it %d: %d safe entries for %d denying vertices\n%s", it, len(rep.Safe), len(denying), dump(rep))
		}
		for _, s := range rep.Safe {
			for _, cand := range []int32{s.Below, s.Above} {
				if cand == 0 {
					continue
				}
				if (cand == s.Below && cand >= s.Requested) || (cand == s.Above && cand <= s.Requested) {
					t.Fatalf("it %d: safe %+v", it, s)
				}
				p2 := rescale.Plan{Parallelism: map[string]int{}}
				for k, v := range plan.Parallelism {
					p2.Parallelism[k] = v
				}
				res, _ := rescale.Simulate(l, plan)
				v := vertexByHex(res, s.VertexID)
				p2 = withVertexParallelism(p2, v, int(cand))
				again := check(t, l, p2, nil, opts)
				for _, f := range again.Findings {
					if f.VertexID == s.VertexID && f.Severity >= opts.failLevel() {
						t.Fatalf("it %d: vertex %s still denied at reported safe parallelism %d (requested %d):\n%s\nplan %v", it, s.VertexID, cand, s.Requested, dump(again), p2.Parallelism)
					}
				}
			}
		}
	}
}

func vertexByHex(r *rescale.Result, hex string) *rescale.VertexAssignment {
	for _, v := range r.Vertices {
		if v.ID.String() == hex {
			return v
		}
	}
	return nil
}

// Raise for a longer local run.
var propSeed, propIterations = uint64(7), 150

// namedState is an operator-state name and its distribution mode, for random jobs.
type namedState struct {
	name string
	mode checkpoint.DistributionMode
}

// randomOps is the shape of the random operators a property test draws: 1 to maxOps operators
// of parallelism 1 to maxP and a max parallelism from maxPs (raised to the parallelism),
// coordinator state one in coordOneIn, each name's state one in stateOneIn with 0 to
// maxElements-1 elements per subtask of 8 to maxSize+7 bytes, keyed state one in three.
type randomOps struct {
	maxOps, maxP           int
	maxPs                  []int
	coordOneIn, stateOneIn int
	maxElements, maxSize   int
}

func (r randomOps) draw(rng *rand.Rand, names []namedState) []tOp {
	var ops []tOp
	for o := 0; o < 1+rng.IntN(r.maxOps); o++ {
		p := 1 + rng.IntN(r.maxP)
		op := tOp{name: "op" + string(rune('a'+o)), uid: "op" + string(rune('a'+o)), p: p, maxP: r.maxPs[rng.IntN(len(r.maxPs))]}
		if op.maxP < p {
			op.maxP = p
		}
		if rng.IntN(r.coordOneIn) == 0 {
			op.coord = 50
		}
		for _, n := range names {
			if rng.IntN(r.stateOneIn) != 0 {
				continue
			}
			per := make([]int, p)
			for i := range per {
				per[i] = rng.IntN(r.maxElements)
			}
			op.states = append(op.states, tState{name: n.name, mode: n.mode, perSubtask: per, size: 8 + rng.IntN(r.maxSize)})
		}
		op.keyedKG = rng.IntN(3) == 0
		ops = append(ops, op)
	}
	return ops
}
