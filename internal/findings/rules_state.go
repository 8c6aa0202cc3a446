package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// stateRuleHit is one catalog state rule that applies to an operator of the simulation.
type stateRuleHit struct {
	v    *rescale.VertexAssignment
	op   *rescale.OperatorAssignment
	e    *CatalogEntry
	rule *StateRule
	k    int // op.State(k) is the state; -1 when the checkpoint has no such state for the operator
	// s is op.State(k), built once for the hit (nil when k < 0): the rules and the
	// safe-parallelism search read it several times.
	s    *rescale.StateDistribution
	note string
	// refused: Flink refuses the planned parallelism before the operator runs (PF110/PF112),
	// so the rule does not fire; the hit still bounds other parallelisms.
	refused bool
}

// stateRules collects the catalog state rules with one of the labels whose bug (if any)
// affects, and whose version scope (if any) includes, the restoring Flink and connector versions.
func stateRules(c *Context, labels ...string) []stateRuleHit {
	key := strings.Join(labels, ",")
	if hits, ok := c.stateHits[key]; ok {
		return hits
	}
	var out []stateRuleHit
	defer func() { c.stateHits[key] = out }()
	for _, v := range c.Result.Vertices {
		for _, op := range v.Operators {
			c.stop.Check()
			out = append(out, stateRulesOf(c, v, op, labels)...)
		}
	}
	return out
}

// stateRulesOf is stateRules for one operator. An operator new to the job (not in the
// checkpoint) counts when its vertex is restored: it then runs its restore branch with no state.
func stateRulesOf(c *Context, v *rescale.VertexAssignment, op *rescale.OperatorAssignment, labels []string) []stateRuleHit {
	var out []stateRuleHit
	e := c.Entry(op)
	switch {
	case e == nil || op.Path == rescale.PathFinished:
		return nil
	case op.Layout == nil && !v.Repartitioned:
		return nil
	case op.Layout != nil && op.Path == rescale.PathNotRestored:
		return nil
	}
	refused := op.CheckpointMaxParallelism > 0 && op.NewParallelism > op.CheckpointMaxParallelism
	for i := range e.States {
		r := &e.States[i]
		match := false
		for _, l := range labels {
			match = match || r.Assumption == l
		}
		if !match {
			continue
		}
		applies, note := r.applies(c.Catalog, c.Options)
		if !applies {
			continue
		}
		h := stateRuleHit{v: v, op: op, e: e, rule: r, k: stateIndex(op, r.Name), note: note, refused: refused}
		if h.k >= 0 {
			h.s = op.State(h.k)
		}
		out = append(out, h)
	}
	return out
}

func (h stateRuleHit) severity(def Severity) Severity {
	if s, _ := ParseSeverity(h.rule.Severity); s != SeverityUnspecified {
		return s
	}
	return def
}

func (h stateRuleHit) remediation() string {
	if h.rule.Remediation != "" {
		return h.rule.Remediation
	}
	return h.e.Remediation
}

func (h stateRuleHit) references(c *Context) []string {
	refs := append([]string(nil), h.e.References...)
	if b := c.Catalog.Bug(h.rule.Bug); b != nil {
		refs = append(refs, b.References...)
	}
	return dedupe(refs)
}

func (h stateRuleHit) describeState() string {
	if h.op.Layout == nil {
		return fmt.Sprintf("`%s` (the operator is new to the job, so the checkpoint has no state for it, but its vertex is restored and it runs its restore branch)", h.rule.Name)
	}
	if h.k < 0 {
		return fmt.Sprintf("`%s` (absent from the checkpoint)", h.rule.Name)
	}
	s := h.s
	return fmt.Sprintf("`%s` (%s, %s in the checkpoint, written at parallelism %d)", s.Name, s.Mode, units.Plural(s.Elements, "element"), h.op.OldParallelism)
}

// stateSafeAt decides, for a state rule, whether new parallelism p keeps every new subtask's
// element count within [lo, hi] (hi < 0: unbounded). It mirrors the round-robin repartitioner:
// unchanged parallelism keeps each old subtask's list; otherwise SPLIT_DISTRIBUTE gives every
// subtask floor(E/p) or ceil(E/p) elements and UNION gives every subtask all E.
func stateSafeAt(h stateRuleHit, p int, lo, hi int64) bool {
	if h.k < 0 {
		return lo <= 0
	}
	s := h.s
	within := func(n int64) bool { return n >= lo && (hi < 0 || n <= hi) }
	switch {
	case s.Mode.String() == "UNION":
		return within(s.Elements)
	case s.Mode.String() == "BROADCAST":
		return true
	case p == h.op.OldParallelism && h.op.Layout != nil:
		for _, n := range oldElementsPerSubtask(h.op.Layout, s.Name) {
			if !within(n) {
				return false
			}
		}
		return true
	}
	floor, ceil := s.Elements/int64(p), (s.Elements+int64(p)-1)/int64(p)
	return within(floor) && within(ceil)
}

func boundFor(c *Context, v *rescale.VertexAssignment, p int, lo, hi int64, labels ...string) (bool, bool) {
	for _, h := range vertexStateRules(c, v, labels...) { // search.go: this vertex's hits, indexed once
		if !stateSafeAt(h, p, lo, hi) {
			return false, true
		}
	}
	return true, true
}

// The catalog state-label family (PF101-PF104): each reads the catalog's labels for the
// operator's states; the remediation, references and affected versions come from the catalog
// entry and its bug (catalog.json), so the rules carry no remedy of their own.

// catalogGraded is the grading of the rules whose severity a catalog state rule may set.
const catalogGraded = "The catalog's state rule may set another severity."

// mayReach reports whether a rule can report a finding at severity s or above: its Severity is
// the highest it reports, unless a catalog state rule grades its findings.
func mayReach(m *RuleMeta, s Severity) bool {
	return m.Severity >= s || m.Grading == catalogGraded
}

// emptyRestore is PF101.
var emptyRestore = RuleMeta{
	ID:       "PF101",
	Title:    "Operator state restored empty where the operator needs an element",
	Severity: Error,
	Grading:  catalogGraded,
	Cause: "Flink's round-robin repartitioner cuts a SPLIT_DISTRIBUTE list into contiguous ranges; when the new " +
		"parallelism exceeds the number of elements, the subtasks with index >= elements receive nothing but still " +
		"run the restore branch (isRestored() is true). Operators that take the first element unconditionally " +
		"(catalog label ONE-UNGUARDED or EXACTLY-ONE) then throw NoSuchElementException, e.g. the table sink's " +
		"CompactOperator (FLINK-31689). The affected versions are the catalog bug's.",
	Remedies: []Remedy{{Text: "The catalog entry's remediation for the state (e.g. keep the parallelism at or below the number of elements)."}},
}

// firstOnly is PF102.
var firstOnly = RuleMeta{
	ID:       "PF102",
	Title:    "Restored elements silently dropped by an operator that reads only the first",
	Severity: Warning,
	Grading:  catalogGraded,
	Cause: "After a scale-down the round-robin repartitioner hands several SPLIT_DISTRIBUTE elements to one new " +
		"subtask. Operators labelled FIRST-ONLY read the first and ignore the rest, so the other old subtasks' " +
		"entries are lost without an error (for the table CompactOperator: pending cleanup of .uncompacted files).",
	Remedies: []Remedy{{Text: "The catalog entry's remediation for the state (e.g. keep the parallelism unchanged)."}},
}

// atMostOne is PF103.
var atMostOne = RuleMeta{
	ID:       "PF103",
	Title:    "Operator state restored with more elements than the operator accepts",
	Severity: Error,
	Grading:  catalogGraded,
	Cause: "Some operators assert that a restored list holds at most one element (e.g. FlinkKafkaProducer's " +
		"next-transactional-id-hint-v2 union state, ContinuousFileMonitoringFunction's file-monitoring-state) and " +
		"throw IllegalStateException or IllegalArgumentException otherwise. A UNION state hands every element to " +
		"every subtask; a scale-down hands several SPLIT_DISTRIBUTE elements to one subtask.",
	Remedies: []Remedy{{Text: "The catalog entry's remediation for the state."}},
}

// orderDependent is PF104.
var orderDependent = RuleMeta{
	ID:       "PF104",
	Title:    "Operator relies on the order of the round-robin state assignment",
	Severity: Info,
	Grading:  catalogGraded,
	Cause: "Operators labelled ORDER-DEPENDENT (KafkaSink with the POOLING transaction naming strategy) assume their " +
		"states are assigned consecutively from subtask 0 and uniformly. Flink's repartitioner does that for a " +
		"single state name; the finding records the dependency when the parallelism changes.",
	Remedies: []Remedy{{Text: "The catalog entry's remediation for the state."}},
}

func init() {
	register(&Rule{meta: &emptyRestore, check: checkEmptyRestore, safeAt: emptyRestoreSafeAt})
	register(&Rule{meta: &firstOnly, check: checkFirstOnly, safeAt: firstOnlySafeAt})
	register(&Rule{meta: &atMostOne, check: checkAtMostOne, safeAt: atMostOneSafeAt})
	register(&Rule{meta: &orderDependent, check: checkOrderDependent})
}

// checkEmptyRestore (PF101): a state whose restore code needs an element (ONE-UNGUARDED,
// EXACTLY-ONE) would be restored empty on some new subtask.
func checkEmptyRestore(c *Context) []Finding {
	var out []Finding
	for _, h := range stateRules(c, OneUnguarded, ExactlyOne) {
		if h.refused {
			continue
		}
		var affected []int32
		if h.k < 0 {
			if !h.v.Repartitioned {
				continue
			}
			for i := 0; i < h.op.NewParallelism; i++ {
				c.stop.Check()
				affected = append(affected, int32(i))
			}
		} else {
			if h.s.Summary.EmptySubtasks == 0 {
				continue
			}
			affected = subtasksOf(c, h.op, h.s, false, func(s rescale.Share, _ int) bool { return s.Elements == 0 })
		}
		if len(affected) == 0 {
			continue
		}
		f := c.finding(&emptyRestore, h.severity(Error), h.op)
		f.StateName = h.rule.Name
		f.AffectedSubtasks = affected
		f.Message = fmt.Sprintf("Restoring %s at parallelism %d: %s no element of %s. %s %s",
			opLabel(h.op, h.e), h.op.NewParallelism, subtasksVerb(affected, "receive"), h.describeState(), h.rule.Consequence, h.note)
		if h.k >= 0 && h.s.Mode.String() == "SPLIT_DISTRIBUTE" && h.s.Elements > 0 {
			f.Message += fmt.Sprintf(" Every subtask receives an element only at parallelism <= %d.", h.s.Elements)
		}
		f.Message = strings.TrimSpace(f.Message)
		f.Remediation = h.remediation()
		f.References = h.references(c)
		out = append(out, f)
	}
	return out
}

func emptyRestoreSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	return boundFor(c, v, p, 1, -1, OneUnguarded, ExactlyOne)
}

// checkFirstOnly (PF102): an operator that reads only the first restored element (FIRST-ONLY)
// would receive several after a scale-down; the others are silently dropped.
func checkFirstOnly(c *Context) []Finding {
	var out []Finding
	for _, h := range stateRules(c, FirstOnly) {
		if h.refused || h.k < 0 || h.s.Summary.MaxElements < 2 {
			continue
		}
		var dropped int64
		var oldDropped []int
		affected := subtasksOf(c, h.op, h.s, true, func(s rescale.Share, n int) bool {
			if s.Elements < 2 {
				return false
			}
			dropped += int64(n) * (s.Elements - 1)
			skip := int64(1)
			for _, sl := range s.Slices {
				n := sl.Elements
				if skip > 0 {
					d := min(skip, n)
					skip -= d
					n -= d
				}
				if n > 0 {
					oldDropped = append(oldDropped, sl.OldSubtask)
				}
			}
			return true
		})
		if len(affected) == 0 {
			continue
		}
		f := c.finding(&firstOnly, h.severity(Warning), h.op)
		f.StateName = h.rule.Name
		f.AffectedSubtasks = affected
		writers, nWriters := intList(oldDropped)
		f.Message = strings.TrimSpace(fmt.Sprintf("Restoring %s at parallelism %d: %s several elements of %s and %s only the first; %s written by %s %s %s dropped. %s",
			opLabel(h.op, h.e), h.op.NewParallelism, subtasksVerb(affected, "receive"), h.describeState(), verbFor(len(affected), "keeps", "keep"),
			units.Plural(dropped, "element"), verbFor(nWriters, "old subtask", "old subtasks"), writers, verbFor(int(dropped), "is", "are"), strings.TrimSpace(h.rule.Consequence+" "+h.note)))
		f.Remediation = h.remediation()
		f.References = h.references(c)
		out = append(out, f)
	}
	return out
}

func firstOnlySafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	return boundFor(c, v, p, 0, 1, FirstOnly)
}

// checkAtMostOne (PF103): an operator that asserts at most one element (AT-MOST-ONE,
// EXACTLY-ONE) would receive several.
func checkAtMostOne(c *Context) []Finding {
	var out []Finding
	for _, h := range stateRules(c, AtMostOne, ExactlyOne) {
		if h.refused || h.k < 0 || h.s.Summary.MaxElements < 2 {
			continue
		}
		affected := subtasksOf(c, h.op, h.s, false, func(s rescale.Share, _ int) bool { return s.Elements > 1 })
		if len(affected) == 0 {
			continue
		}
		f := c.finding(&atMostOne, h.severity(Error), h.op)
		f.StateName = h.rule.Name
		f.AffectedSubtasks = affected
		f.Message = strings.TrimSpace(fmt.Sprintf("Restoring %s at parallelism %d: %s up to %d elements of %s, but the operator accepts at most one. %s %s",
			opLabel(h.op, h.e), h.op.NewParallelism, subtasksVerb(affected, "receive"), h.s.Summary.MaxElements, h.describeState(), h.rule.Consequence, h.note))
		f.Remediation = h.remediation()
		f.References = h.references(c)
		out = append(out, f)
	}
	return out
}

func atMostOneSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	return boundFor(c, v, p, 0, 1, AtMostOne, ExactlyOne)
}

// checkOrderDependent (PF104): an operator relies on the repartitioner's consecutive
// assignment (KafkaSink POOLING); informational when its parallelism changes.
func checkOrderDependent(c *Context) []Finding {
	var out []Finding
	for _, h := range stateRules(c, OrderDependent) {
		if h.refused || !h.v.Rescaled() {
			continue
		}
		f := c.finding(&orderDependent, h.severity(Info), h.op)
		f.StateName = h.rule.Name
		f.Message = strings.TrimSpace(fmt.Sprintf("%s changes parallelism %d -> %d; its state %s is order-dependent. %s",
			upperFirst(opLabel(h.op, h.e)), h.op.OldParallelism, h.op.NewParallelism, h.describeState(), strings.TrimSpace(h.rule.Consequence+" "+h.note)))
		f.Remediation = h.remediation()
		f.References = h.references(c)
		out = append(out, f)
	}
	return out
}

// intList renders the distinct values of xs compactly ("0, 2, 5-9") and counts them.
func intList(xs []int) (string, int) {
	seen := map[int]bool{}
	var idx []int32
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			idx = append(idx, int32(x))
		}
	}
	sortInt32(idx)
	return subtaskList(idx), len(idx)
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
