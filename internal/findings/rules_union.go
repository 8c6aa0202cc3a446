package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// unionStat is one UNION state of an operator as stored in the layout.
type unionStat struct {
	name            string
	elements, bytes int64
	// oldP is the operator's parallelism; first is what old subtask 0 stored of every state
	// under the name (any mode), as oldElementsPerSubtask counts them; wholesale is the §5.2
	// heuristic (see unionRefs.stat).
	oldP      int
	first     int64
	wholesale bool
}

// unionRef is one named operator state of an operator: old subtask record sub (an index into
// OperatorLayout.Subtasks), position k in its managed (raw false) or raw handle.
type unionRef struct {
	sub, k int32
	raw    bool
}

// unionRefs reads the operator's named states by reference, for sorting them by name without
// a table keyed by name (tens of bytes a name: an operator can hold 300,000 UNION states).
type unionRefs struct {
	op   *checkpoint.OperatorLayout
	refs []unionRef
}

func (u *unionRefs) entry(r unionRef) *checkpoint.StateEntryLayout {
	st := &u.op.Subtasks[r.sub]
	h := st.ManagedOperatorState
	if r.raw {
		h = st.RawOperatorState
	}
	return &h.States[r.k]
}

// compare orders references by name, then old subtask index, then where they are.
func (u *unionRefs) compare(a, b unionRef) int {
	sa, sb := &u.op.Subtasks[a.sub], &u.op.Subtasks[b.sub]
	return cmp.Or(strings.Compare(u.entry(a).Name, u.entry(b).Name), cmp.Compare(sa.Index, sb.Index),
		cmp.Compare(a.sub, b.sub), cmp.Compare(listIndex(a.raw), listIndex(b.raw)), cmp.Compare(a.k, b.k))
}

func listIndex(raw bool) int {
	if raw {
		return 1
	}
	return 0
}

// eachUnionState calls fn with each UNION state of the operator, in name order: its elements
// and bytes over the old subtasks, and the elements per old subtask of every state under its
// name. The states are found by sorting references to them (12 bytes a state): UNION states,
// then any other state under one of their names.
func eachUnionState(stop *cancel.Flag, op *checkpoint.OperatorLayout, fn func(u *unionStat)) {
	u := &unionRefs{op: op}
	others, n := false, 0
	for i := range op.Subtasks {
		for s := range op.Subtasks[i].OperatorStates() {
			if s.Mode == checkpoint.Union {
				n++
			}
		}
	}
	// Sized at once: grown by appending, the references would be held about twice at PF130's
	// peak (bench/README.md, "Many state names, round 5").
	u.refs = make([]unionRef, 0, n)
	for i := range op.Subtasks {
		u.eachRef(i, func(r unionRef, s *checkpoint.StateEntryLayout) {
			if s.Mode == checkpoint.Union {
				u.refs = append(u.refs, r)
			} else {
				others = true
			}
		})
	}
	if len(u.refs) == 0 {
		return
	}
	stop.Check()
	slices.SortFunc(u.refs, u.compare)
	if others && u.addOthers(stop) {
		slices.SortFunc(u.refs, u.compare)
	}
	for lo := 0; lo < len(u.refs); {
		stop.Check()
		name := u.entry(u.refs[lo]).Name
		hi := lo + 1
		for hi < len(u.refs) && u.entry(u.refs[hi]).Name == name {
			hi++
		}
		st := u.stat(u.refs[lo:hi])
		fn(&st)
		lo = hi
	}
}

// addOthers adds the references of the states that are not UNION but are under the name of a
// UNION state (u.refs, sorted), and reports whether there are any.
func (u *unionRefs) addOthers(stop *cancel.Flag) bool {
	n := len(u.refs)
	for i := range u.op.Subtasks {
		stop.Check()
		u.eachRef(i, func(r unionRef, s *checkpoint.StateEntryLayout) {
			if s.Mode == checkpoint.Union {
				return
			}
			if _, found := slices.BinarySearchFunc(u.refs[:n], s.Name, func(r unionRef, name string) int {
				return strings.Compare(u.entry(r).Name, name)
			}); found {
				u.refs = append(u.refs, r)
			}
		})
	}
	return len(u.refs) > n
}

// eachRef calls fn with each named state of old subtask record i and its reference: the
// managed handle's, then the raw handle's.
func (u *unionRefs) eachRef(i int, fn func(r unionRef, s *checkpoint.StateEntryLayout)) {
	st := &u.op.Subtasks[i]
	for hk, h := range [2]*checkpoint.OperatorStateHandleLayout{st.ManagedOperatorState, st.RawOperatorState} {
		if h == nil {
			continue
		}
		for k := range h.States {
			fn(unionRef{sub: int32(i), k: int32(k), raw: hk == 1}, &h.States[k])
		}
	}
}

// stat sums one name's states (refs, sorted by old subtask index).
func (u *unionRefs) stat(refs []unionRef) unionStat {
	p := u.op.Parallelism
	st := unionStat{name: u.entry(refs[0]).Name, oldP: max(p, 0)}
	// The §5.2 heuristic: at least two old subtasks, all holding the same element count, at
	// least the parallelism: every subtask re-snapshots the whole union, which legitimate union
	// users (each writes its own share) do not do. Subtasks are visited by index: next is the
	// index expected, so that one without elements breaks the equality.
	next, same := 0, p >= 2
	for lo := 0; lo < len(refs); {
		idx := u.op.Subtasks[refs[lo].sub].Index
		var n int64
		hi := lo
		for ; hi < len(refs) && u.op.Subtasks[refs[hi].sub].Index == idx; hi++ {
			s := u.entry(refs[hi])
			n += s.Elements
			if s.Mode == checkpoint.Union {
				st.elements += s.Elements
				st.bytes += s.Bytes
			}
		}
		lo = hi
		if idx < 0 || idx >= p {
			continue
		}
		switch {
		case idx == 0:
			st.first = n
		case idx != next || n != st.first:
			same = false
		}
		next = idx + 1
	}
	st.wholesale = same && next == p && st.first >= int64(p)
	return st
}

// orphanUnion is PF130.
var orphanUnion = RuleMeta{
	ID:       "PF130",
	Title:    "Orphaned UNION state grows with every restore",
	Severity: Warning,
	Grading:  "INFO when the evidence is weak: a state the catalog's operator does not claim but that is not copied wholesale, or a wholesale copy in an operator with a single state.",
	Cause: "On restore the operator state backend re-creates every state listed in the restored stream's header, " +
		"whether or not the operator asks for it, and writes all registered states back at the next snapshot. A " +
		"UNION state hands every element to every subtask, so an unclaimed UNION state is multiplied by the " +
		"parallelism on every restore (including failover restores). Typical case: KafkaSource restored under the " +
		"uid of a FlinkKafkaConsumer keeps `topic-partition-offset-states`; the offsets end up in _metadata and in " +
		"every TaskDeploymentDescriptor until the RPC frame size is exceeded.",
	Remedies: []Remedy{{Text: "Remove the unclaimed state: change the operator's uid and restore with --allowNonRestoredState (the operator then starts without state), or delete the state with the State Processor API. --allowNonRestoredState alone does not drop state names inside a mapped operator."}},
}

func init() { register(&Rule{meta: &orphanUnion, check: checkOrphanUnion}) }

// unionHit is why PF130 reports a UNION state: the cause that makes it orphaned.
type unionHit struct {
	sev    Severity
	kind   unionCause
	orphan *OrphanRule // the catalog's legacy state, if that is the cause
}

// unionCause is why PF130 takes a UNION state for orphaned.
type unionCause uint8

const (
	legacyUnion    unionCause = iota // the catalog names it as another operator's state
	unclaimedUnion                   // the catalog's operator does not register it
	wholesaleUnion                   // unknown operator; every subtask stored the same elements
)

// unionGroup is an operator's orphaned UNION states of one cause, in name order: the first's
// figures, every name, and their elements and bytes together.
type unionGroup struct {
	hit             unionHit
	first           unionStat
	names           []string
	elements, bytes int64
}

// checkOrphanUnion (PF130): a UNION state that the operator's implementation never registers
// is carried forward and multiplied by the parallelism on every restore.
//
// It reports once per operator and cause (severity, kind, the catalog's legacy state): an
// operator of 30,000 orphaned UNION states gets one finding that names five and forecasts them
// together, as they travel together. Only the names are kept per state, as the finding lists
// them.
func checkOrphanUnion(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		if !hasUnionState(op.Layout) {
			return // most operators: nothing to allocate for them
		}
		e := c.Entry(op)
		var groups []*unionGroup // by first hit
		// Whether the operator has two state names or more, once needed.
		var manyStates, manyKnown bool
		eachUnionState(c.stop, op.Layout, func(u *unionStat) {
			h, ok := orphanUnionHit(e, u, func() bool {
				if !manyKnown {
					manyStates, manyKnown = hasTwoStateNames(op.Layout), true
				}
				return manyStates
			})
			if !ok {
				return
			}
			var g *unionGroup
			for _, x := range groups {
				if x.hit == h {
					g = x
					break
				}
			}
			if g == nil {
				g = &unionGroup{hit: h, first: *u}
				groups = append(groups, g)
			}
			g.names = append(g.names, u.name)
			g.elements, g.bytes = g.elements+u.elements, g.bytes+u.bytes
		})
		for _, g := range groups {
			out = append(out, orphanUnionFinding(c, op, e, g))
		}
	})
	return out
}

// hasUnionState reports whether the operator has a UNION state.
func hasUnionState(op *checkpoint.OperatorLayout) bool {
	for i := range op.Subtasks {
		for s := range op.Subtasks[i].OperatorStates() {
			if s.Mode == checkpoint.Union {
				return true
			}
		}
	}
	return false
}

// hasTwoStateNames reports whether the operator's states have two names or more.
func hasTwoStateNames(op *checkpoint.OperatorLayout) bool {
	first, seen := "", false
	for i := range op.Subtasks {
		for s := range op.Subtasks[i].OperatorStates() {
			switch {
			case !seen:
				first, seen = s.Name, true
			case s.Name != first:
				return true
			}
		}
	}
	return false
}

// orphanUnionHit says whether PF130 reports the UNION state u of an operator (catalog entry e)
// and why; manyStates says whether the operator has two state names or more.
func orphanUnionHit(e *CatalogEntry, u *unionStat, manyStates func() bool) (unionHit, bool) {
	if u.elements == 0 {
		return unionHit{}, false
	}
	h := unionHit{sev: Warning, orphan: e.Orphan(u.name)}
	switch {
	case h.orphan != nil:
		h.kind = legacyUnion
	case e != nil && !e.Claims(u.name):
		h.kind = unclaimedUnion
		if !u.wholesale {
			h.sev = Info
		}
	case e == nil && u.wholesale:
		h.kind = wholesaleUnion
		if !manyStates() {
			h.sev = Info
		}
	default:
		return unionHit{}, false
	}
	return h, true
}

// unionWhy says why the states of g (one or more) count as orphaned.
func unionWhy(g *unionGroup, e *CatalogEntry) string {
	u, h := &g.first, g.hit
	if len(g.names) == 1 {
		switch h.kind {
		case legacyUnion:
			return fmt.Sprintf("`%s` is state of %s, which %s never registers: it is legacy state left under the same uid.", u.name, h.orphan.From, e.Name)
		case unclaimedUnion:
			return fmt.Sprintf("`%s` is not a state that %s registers.", u.name, e.Name)
		}
		return fmt.Sprintf("Every one of the %d old subtasks stored the same %s of `%s` (heuristic: legitimate union users write only their own share).", u.oldP, units.Plural(u.first, "element"), u.name)
	}
	switch h.kind {
	case legacyUnion:
		return fmt.Sprintf("%s are state of %s, which %s never registers: they are legacy state left under the same uid.", statesText(g.names), h.orphan.From, e.Name)
	case unclaimedUnion:
		return fmt.Sprintf("%s are not states that %s registers.", statesText(g.names), e.Name)
	}
	return fmt.Sprintf("Every one of the %d old subtasks stored the same number of elements of each of %s (heuristic: legitimate union users write only their own share).", u.oldP, statesText(g.names))
}

// orphanUnionFinding is PF130's finding for the operator's orphaned UNION states of one cause.
func orphanUnionFinding(c *Context, op *rescale.OperatorAssignment, e *CatalogEntry, g *unionGroup) Finding {
	f := c.finding(&orphanUnion, g.hit.sev, op)
	elements, bytes := g.elements, g.bytes
	first := &g.first
	f.StateName = first.name
	what, it := "an orphaned UNION state", "It has"
	if len(g.names) > 1 {
		f.StateNames = g.names
		what, it = units.Thousands(int64(len(g.names)))+" orphaned UNION states", "They have"
	}
	p := int64(op.NewParallelism)
	next := p * elements
	f.AffectedSubtasks = rangeFrom(0, int32(p))
	holder := "each of the " + units.Plural(p, "new subtask") + " holds"
	if p == 1 {
		holder = "the new subtask holds"
	}
	f.Message = fmt.Sprintf("%s holds %s: %s %s %s (%s) in this checkpoint, written by %s. Forecast: after this restore %s all %s and writes them back, so the next checkpoint holds %s (%s) with %s of offsets in _metadata; restoring that checkpoint ships %s (%s of offsets) in every subtask's TaskDeploymentDescriptor, and each further restore multiplies it by the parallelism again.",
		upperFirst(opLabel(op, e)), what, unionWhy(g, e), it, units.Plural(elements, "element"), bytesText(bytes), units.Plural(int64(first.oldP), "old subtask"), holder, units.Plural(elements, "element"),
		units.Plural(next, "element"), bytesText(p*bytes), bytesText(8*next), units.Plural(next, "element"), bytesText(8*next))
	f.Message += " " + frameForecast(8*elements, p, c.Options.frameSize())
	if bytes > 0 && bytes < c.Options.inlineThreshold() {
		f.Message += fmt.Sprintf(" While each subtask's stream stays under the inline threshold (%s) the element bytes travel inline too.", bytesText(c.Options.inlineThreshold()))
	}
	if g.hit.orphan != nil {
		f.Remediation = g.hit.orphan.Remediation
		f.References = append(f.References, g.hit.orphan.References...)
	} else {
		f.Remediation = orphanUnion.remedy("")
	}
	f.Remediation += " " + pruneSuggestion(op.ID.String(), len(g.names), first.name)
	if e != nil {
		f.References = dedupe(append(f.References, e.References...))
	}
	return f
}

// frameForecast says after how many restores at parallelism p the union's offsets alone
// (offsetBytes now, times p per restore) exceed the RPC frame size.
func frameForecast(offsetBytes, p, frame int64) string {
	if offsetBytes > frame {
		return fmt.Sprintf("Its offsets alone (%s) already exceed the RPC frame size of %s.", bytesText(offsetBytes), bytesText(frame))
	}
	if p <= 1 {
		return "At parallelism 1 it does not grow, but it is carried in every checkpoint and deployment."
	}
	n := offsetBytes
	for k := 1; k <= 64; k++ {
		n *= p
		if n > frame {
			return fmt.Sprintf("At parallelism %d its offsets exceed the RPC frame size of %s at the %s restore after this one (failover restores count too), and deployments then fail.", p, bytesText(frame), ordinal(k))
		}
	}
	return ""
}

func ordinal(k int) string {
	switch {
	case k%100 >= 11 && k%100 <= 13:
		return fmt.Sprintf("%dth", k)
	case k%10 == 1:
		return fmt.Sprintf("%dst", k)
	case k%10 == 2:
		return fmt.Sprintf("%dnd", k)
	case k%10 == 3:
		return fmt.Sprintf("%drd", k)
	}
	return fmt.Sprintf("%dth", k)
}
