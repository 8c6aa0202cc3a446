package rescale

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
)

// corpusDir is the shared corpus folder (FuzzSimulate seeds from it when present).
func corpusDir() string { return corpustest.Dir() }

// corpusMetadata lists the `metadata` files of MANIFEST.tsv, skipping when the corpus is absent.
func corpusMetadata(t *testing.T) []string { return corpustest.Metadata(t) }

// TestCorpus simulates every corpus _metadata file: at the stored parallelism every subtask keeps
// its own state; at 1, 2× and max parallelism Flink's invariants hold.
func TestCorpus(t *testing.T) {
	paths := corpusMetadata(t)
	var files, decoded, decodeErrors, operators, withState, simulations, failures int
	kinds := map[FailureKind]int{}
	keyedChecked := 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		files++
		l, err := checkpoint.ReadLayout(bytes.NewReader(b))
		if err != nil {
			if strings.Contains(err.Error(), "not implemented") {
				t.Skipf("checkpoint.ReadLayout is still a stub: %v", err)
			}
			decodeErrors++
			continue
		}
		decoded++
		operators += len(l.Operators)
		rel, _ := filepath.Rel(corpusDir(), path)
		// Stored parallelism.
		r, err := Simulate(l, Plan{})
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		simulations++
		for _, v := range r.Vertices {
			for _, a := range v.Operators {
				if a.sim != nil {
					withState++
					checkStoredAssignment(t, rel, a)
				}
			}
		}
		if len(r.Failures) > 0 {
			t.Errorf("%s: restoring at the stored parallelism fails: %+v", rel, r.Failures[0])
		}
		// 1, 2× and max parallelism, per operator.
		for _, f := range []func(p, maxP int) int{
			func(int, int) int { return 1 },
			func(p, _ int) int { return min(2*p, UpperBoundMaxParallelism) },
			func(_, maxP int) int { return max(1, min(maxP, UpperBoundMaxParallelism)) },
		} {
			plan := Plan{Parallelism: map[string]int{}}
			for i := range l.Operators {
				o := &l.Operators[i]
				if o.Parallelism > 0 {
					plan.Parallelism[o.ID.String()] = f(o.Parallelism, o.MaxParallelism)
				}
			}
			r, err := Simulate(l, plan)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			simulations++
			failures += len(r.Failures)
			for _, f := range r.Failures {
				kinds[f.Kind]++
			}
			for _, v := range r.Vertices {
				for _, a := range v.Operators {
					if a.sim == nil {
						continue
					}
					for _, s := range a.States() {
						checkStateInvariants(t, s, a.OldParallelism, a.NewParallelism, false)
					}
					if a.NewParallelism <= 4096 {
						checkSummaries(t, a)
					}
					if checkKeyedOwnership(t, rel, a) {
						keyedChecked++
					}
				}
			}
		}
	}
	t.Logf("%d metadata files: %d decoded (%d decode errors, the codec's concern), %d operators, %d with restored state, %d simulations, %d keyed distributions checked, %d precondition failures at 1/2×/maxP %v",
		files, decoded, decodeErrors, operators, withState, simulations, keyedChecked, failures, kinds)
}

// checkStoredAssignment: at the stored parallelism, new subtask i keeps old subtask i's elements
// and key groups.
func checkStoredAssignment(t *testing.T, file string, a *OperatorAssignment) {
	t.Helper()
	if a.OldParallelism != a.NewParallelism {
		return
	}
	for i := 0; i < a.NewParallelism; i++ {
		old := a.sim.byOld[i]
		for _, s := range a.States() {
			sh := s.Share(i)
			var own int64
			if old != nil {
				h := old.ManagedOperatorState
				if s.Raw {
					h = old.RawOperatorState
				}
				if h != nil {
					for _, e := range h.States {
						if e.Name == s.Name && e.Mode == s.Mode {
							own += e.Elements
						}
					}
				}
			}
			switch s.Mode {
			case checkpoint.Union:
				if sh.Elements != s.Elements {
					t.Errorf("%s %s %s subtask %d: %d union elements of %d", file, a.ID, s.Name, i, sh.Elements, s.Elements)
				}
			default:
				if sh.Elements < own || s.Mode == checkpoint.SplitDistribute && sh.Elements != own {
					t.Errorf("%s %s %s subtask %d: %d elements, stored %d", file, a.ID, s.Name, i, sh.Elements, own)
				}
			}
		}
		for _, k := range []*KeyedDistribution{a.ManagedKeyed, a.RawKeyed} {
			if k == nil {
				continue
			}
			sh := k.Share(i)
			var want *checkpoint.KeyedStateHandleLayout
			if old != nil {
				want = old.ManagedKeyedState
				if k.Raw {
					want = old.RawKeyedState
				}
			}
			switch {
			case want == nil && len(sh.Handles) != 0,
				want != nil && (len(sh.Handles) != 1 || sh.Handles[0].OldSubtask != i || !sh.Handles[0].Whole || sh.ReadBytes != want.StateSize):
				t.Errorf("%s %s subtask %d: keyed handles %+v, stored %+v", file, a.ID, i, sh.Handles, want)
			}
		}
	}
}

// checkKeyedOwnership: the new key-group ranges partition [0, maxP) with operatorIndex
// consistent, and on a rescale no key group is read twice from narrowed key-group handles.
func checkKeyedOwnership(t *testing.T, file string, a *OperatorAssignment) bool {
	t.Helper()
	checked := false
	for _, k := range []*KeyedDistribution{a.ManagedKeyed, a.RawKeyed} {
		if k == nil || k.MaxParallelism < k.NewParallelism || k.MaxParallelism > UpperBoundMaxParallelism {
			continue
		}
		checked = true
		checkPartition(t, k.MaxParallelism, k.NewParallelism)
		readBy := map[int]int{}
		for i := 0; i < k.NewParallelism; i++ {
			sh := k.Share(i)
			if sh.KeyGroups != KeyGroupRangeForSubtask(k.MaxParallelism, k.NewParallelism, i) {
				t.Errorf("%s %s subtask %d: range %v", file, a.ID, i, sh.KeyGroups)
			}
			for _, h := range sh.Handles {
				if h.Whole {
					continue
				}
				if IntersectKeyGroups(h.KeyGroups, sh.KeyGroups) != h.KeyGroups {
					t.Errorf("%s %s subtask %d: narrowed handle %v outside %v", file, a.ID, i, h.KeyGroups, sh.KeyGroups)
				}
				for kg := h.KeyGroups.Start; kg <= h.KeyGroups.End(); kg++ {
					if readBy[kg]++; readBy[kg] > 1 && k.OldParallelism != k.NewParallelism {
						t.Errorf("%s %s: key group %d read twice", file, a.ID, kg)
					}
				}
			}
		}
	}
	return checked
}
