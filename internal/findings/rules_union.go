package findings

import (
	"fmt"
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// unionStat is one UNION state of an operator as stored in the layout.
type unionStat struct {
	name        string
	elements    int64
	bytes       int64
	perSubtask  []int64
	inlineBytes int64 // inline streams holding its elements
}

func unionStates(op *checkpoint.OperatorLayout) []unionStat {
	index := map[string]int{} // name → position in out
	var out []unionStat
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		for h := range st.OperatorStateHandles() {
			for _, s := range h.States {
				if s.Mode != checkpoint.Union {
					continue
				}
				k, ok := index[s.Name]
				if !ok {
					k = len(out)
					index[s.Name] = k
					out = append(out, unionStat{name: s.Name})
				}
				u := &out[k]
				u.elements += s.Elements
				u.bytes += s.Bytes
				if s.Elements > 0 && h.Stream.Inline() {
					u.inlineBytes += s.Bytes
				}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	// Elements per old subtask, of every state under a UNION state's name (as
	// oldElementsPerSubtask counts them), in one pass: a pass per name would be quadratic in an
	// operator of 30,000 UNION states.
	for k := range out {
		out[k].perSubtask = make([]int64, op.Parallelism)
	}
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		if st.Index < 0 || st.Index >= op.Parallelism {
			continue
		}
		for s := range st.OperatorStates() {
			if k, ok := index[s.Name]; ok {
				out[k].perSubtask[st.Index] += s.Elements
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

// wholesale reports the §5.2 heuristic: at least two old subtasks, all holding the same
// element count, at least the parallelism: every subtask re-snapshots the whole union, which
// legitimate union users (each writes its own share) do not do.
func (u unionStat) wholesale() bool {
	if len(u.perSubtask) < 2 {
		return false
	}
	n := u.perSubtask[0]
	for _, m := range u.perSubtask {
		if m != n {
			return false
		}
	}
	return n >= int64(len(u.perSubtask))
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

// unionHit is one orphaned UNION state of an operator (its position in unionStates' answer),
// with the cause that makes it one.
type unionHit struct {
	k      int
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

// checkOrphanUnion (PF130): a UNION state that the operator's implementation never registers
// is carried forward and multiplied by the parallelism on every restore.
//
// It reports once per operator and cause (severity, kind, the catalog's legacy state): an
// operator of 30,000 orphaned UNION states gets one finding that names five and forecasts them
// together, as they travel together.
func checkOrphanUnion(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		e := c.Entry(op)
		us := unionStates(op.Layout)
		type cause struct {
			sev    Severity
			kind   unionCause
			orphan *OrphanRule
		}
		var firsts []unionHit       // each cause's first hit
		groups := map[cause][]int{} // positions in us, by cause
		for _, h := range orphanUnions(c, op, e, us) {
			key := cause{h.sev, h.kind, h.orphan}
			if _, ok := groups[key]; !ok {
				firsts = append(firsts, h)
			}
			groups[key] = append(groups[key], h.k)
		}
		for _, h := range firsts {
			out = append(out, orphanUnionFinding(c, op, e, h, us, groups[cause{h.sev, h.kind, h.orphan}]))
		}
	})
	return out
}

// orphanUnions lists the operator's UNION states (us, in name order) that PF130 reports.
func orphanUnions(c *Context, op *rescale.OperatorAssignment, e *CatalogEntry, us []unionStat) []unionHit {
	var out []unionHit
	stateNames := -1 // operatorStates(op.Layout) counted once, when first needed
	for k, u := range us {
		c.stop.Check()
		if u.elements == 0 {
			continue
		}
		h := unionHit{k: k, sev: Warning, orphan: e.Orphan(u.name)}
		switch {
		case h.orphan != nil:
			h.kind = legacyUnion
		case e != nil && !e.Claims(u.name):
			h.kind = unclaimedUnion
			if !u.wholesale() {
				h.sev = Info
			}
		case e == nil && u.wholesale():
			h.kind = wholesaleUnion
			if stateNames < 0 {
				stateNames = len(operatorStates(op.Layout))
			}
			if stateNames < 2 {
				h.sev = Info
			}
		default:
			continue
		}
		out = append(out, h)
	}
	return out
}

// unionWhy says why the states us[ks] (one or more, in name order) count as orphaned.
func unionWhy(h unionHit, e *CatalogEntry, us []unionStat, ks []int) string {
	u := us[ks[0]]
	if len(ks) == 1 {
		switch h.kind {
		case legacyUnion:
			return fmt.Sprintf("`%s` is state of %s, which %s never registers: it is legacy state left under the same uid.", u.name, h.orphan.From, e.Name)
		case unclaimedUnion:
			return fmt.Sprintf("`%s` is not a state that %s registers.", u.name, e.Name)
		}
		return fmt.Sprintf("Every one of the %d old subtasks stored the same %s of `%s` (heuristic: legitimate union users write only their own share).", len(u.perSubtask), units.Plural(u.perSubtask[0], "element"), u.name)
	}
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = us[k].name
	}
	switch h.kind {
	case legacyUnion:
		return fmt.Sprintf("%s are state of %s, which %s never registers: they are legacy state left under the same uid.", statesText(names), h.orphan.From, e.Name)
	case unclaimedUnion:
		return fmt.Sprintf("%s are not states that %s registers.", statesText(names), e.Name)
	}
	return fmt.Sprintf("Every one of the %d old subtasks stored the same number of elements of each of %s (heuristic: legitimate union users write only their own share).", len(u.perSubtask), statesText(names))
}

// orphanUnionFinding is PF130's finding for the operator's orphaned UNION states us[ks] of one cause (h
// is the first state's hit).
func orphanUnionFinding(c *Context, op *rescale.OperatorAssignment, e *CatalogEntry, h unionHit, us []unionStat, ks []int) Finding {
	f := c.finding(&orphanUnion, h.sev, op)
	var elements, bytes int64
	for _, k := range ks {
		elements, bytes = elements+us[k].elements, bytes+us[k].bytes
	}
	first := us[ks[0]]
	f.StateName = first.name
	what, it := "an orphaned UNION state", "It has"
	if len(ks) > 1 {
		f.StateNames = make([]string, len(ks))
		for i, k := range ks {
			f.StateNames[i] = us[k].name
		}
		what, it = units.Thousands(int64(len(ks)))+" orphaned UNION states", "They have"
	}
	p := int64(op.NewParallelism)
	next := p * elements
	f.AffectedSubtasks = rangeFrom(0, int32(p))
	holder := "each of the " + units.Plural(p, "new subtask") + " holds"
	if p == 1 {
		holder = "the new subtask holds"
	}
	f.Message = fmt.Sprintf("%s holds %s: %s %s %s (%s) in this checkpoint, written by %s. Forecast: after this restore %s all %s and writes them back, so the next checkpoint holds %s (%s) with %s of offsets in _metadata; restoring that checkpoint ships %s (%s of offsets) in every subtask's TaskDeploymentDescriptor, and each further restore multiplies it by the parallelism again.",
		upperFirst(opLabel(op, e)), what, unionWhy(h, e, us, ks), it, units.Plural(elements, "element"), bytesText(bytes), units.Plural(int64(len(first.perSubtask)), "old subtask"), holder, units.Plural(elements, "element"),
		units.Plural(next, "element"), bytesText(p*bytes), bytesText(8*next), units.Plural(next, "element"), bytesText(8*next))
	f.Message += " " + frameForecast(8*elements, p, c.Options.frameSize())
	if bytes > 0 && bytes < c.Options.inlineThreshold() {
		f.Message += fmt.Sprintf(" While each subtask's stream stays under the inline threshold (%s) the element bytes travel inline too.", bytesText(c.Options.inlineThreshold()))
	}
	if h.orphan != nil {
		f.Remediation = h.orphan.Remediation
		f.References = append(f.References, h.orphan.References...)
	} else {
		f.Remediation = orphanUnion.remedy("")
	}
	f.Remediation += " " + pruneSuggestion(op.ID.String(), len(ks), first.name)
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
