package findings

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// unionStatsReference is PF130's per-name figures computed the plain way (a table by name, the
// elements per old subtask in full), against which eachUnionState's sorted references are
// checked.
func unionStatsReference(op *checkpoint.OperatorLayout) []unionStat {
	index := map[string]int{}
	var out []unionStat
	var per [][]int64
	for i := range op.Subtasks {
		for s := range op.Subtasks[i].OperatorStates() {
			if s.Mode != checkpoint.Union {
				continue
			}
			k, ok := index[s.Name]
			if !ok {
				k = len(out)
				index[s.Name] = k
				out = append(out, unionStat{name: s.Name, oldP: op.Parallelism})
				per = append(per, make([]int64, op.Parallelism))
			}
			out[k].elements += s.Elements
			out[k].bytes += s.Bytes
		}
	}
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		for s := range st.OperatorStates() {
			if k, ok := index[s.Name]; ok && st.Index >= 0 && st.Index < op.Parallelism {
				per[k][st.Index] += s.Elements
			}
		}
	}
	for k := range out {
		p := per[k]
		if len(p) > 0 {
			out[k].first = p[0]
		}
		out[k].wholesale = len(p) >= 2 && p[0] >= int64(len(p))
		for _, n := range p {
			out[k].wholesale = out[k].wholesale && n == p[0]
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

// TestEachUnionStateMatchesReference: on random operators (names UNION in some handles and
// of another mode in others, raw handles, names twice in a handle, subtask records of one
// index twice or out of range, subtasks without state), eachUnionState gives the reference's
// figures in its order.
func TestEachUnionStateMatchesReference(t *testing.T) {
	modes := []checkpoint.DistributionMode{checkpoint.Union, checkpoint.Union, checkpoint.SplitDistribute, checkpoint.Broadcast}
	wholesale, states := 0, 0
	for seed := int64(0); seed < 400; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := 1 + rng.Intn(5)
		op := &checkpoint.OperatorLayout{Parallelism: p}
		names := 1 + rng.Intn(6)
		equal := rng.Intn(2) == 0 // every subtask stores the same elements of a name
		for j := 0; j < p+rng.Intn(2); j++ {
			st := checkpoint.SubtaskLayout{Index: j}
			switch rng.Intn(16) {
			case 0:
				continue // reported nothing
			case 1:
				st.Index = j - 1 // a second record of an index (or -1)
			case 2:
				st.Index = p + 1 // out of range
			}
			for hk := 0; hk < 2; hk++ {
				if hk == 1 && (equal || rng.Intn(3) != 0) {
					continue
				}
				h := &checkpoint.OperatorStateHandleLayout{}
				for k := 0; k < names; k++ {
					if !equal && rng.Intn(4) == 0 {
						continue
					}
					n := int64(k + p)
					if !equal {
						n = rng.Int63n(int64(2 * p))
					}
					e := checkpoint.StateEntryLayout{Name: fmt.Sprintf("s%d", rng.Intn(names)), Mode: modes[rng.Intn(len(modes))], Elements: n, Bytes: 3 * n}
					if equal {
						e.Name, e.Mode = fmt.Sprintf("s%d", k), checkpoint.Union
					}
					h.States = append(h.States, e)
				}
				if hk == 0 {
					st.ManagedOperatorState = h
				} else {
					st.RawOperatorState = h
				}
			}
			op.Subtasks = append(op.Subtasks, st)
		}
		want := unionStatsReference(op)
		var got []unionStat
		eachUnionState(nil, op, func(u *unionStat) { got = append(got, *u) })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d:\ngot  %+v\nwant %+v", seed, got, want)
		}
		for _, u := range want {
			states++
			if u.wholesale {
				wholesale++
			}
		}
	}
	if states < 500 || wholesale < 50 {
		t.Errorf("too few cases: %d UNION states, %d wholesale", states, wholesale)
	}
}
