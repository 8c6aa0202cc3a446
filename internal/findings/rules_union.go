package findings

import (
	"fmt"
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
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
	byName := map[string]*unionStat{}
	var names []string
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		for h := range st.OperatorStateHandles() {
			for _, s := range h.States {
				if s.Mode != checkpoint.Union {
					continue
				}
				u := byName[s.Name]
				if u == nil {
					u = &unionStat{name: s.Name}
					byName[s.Name] = u
					names = append(names, s.Name)
				}
				u.elements += s.Elements
				u.bytes += s.Bytes
				if s.Elements > 0 && h.Stream.Inline() {
					u.inlineBytes += s.Bytes
				}
			}
		}
	}
	// Elements per old subtask, of every state under a UNION state's name (as
	// oldElementsPerSubtask counts them), in one pass: a pass per name would be quadratic in an
	// operator of 30,000 UNION states.
	for _, u := range byName {
		u.perSubtask = make([]int64, op.Parallelism)
	}
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		if len(byName) == 0 || st.Index < 0 || st.Index >= op.Parallelism {
			continue
		}
		for s := range st.OperatorStates() {
			if u := byName[s.Name]; u != nil {
				u.perSubtask[st.Index] += s.Elements
			}
		}
	}
	sort.Strings(names)
	out := make([]unionStat, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
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

// OrphanUnionRule (PF130): a UNION state that the operator's implementation never registers
// is carried forward and multiplied by the parallelism on every restore.
type OrphanUnionRule struct{}

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

func init() { register(OrphanUnionRule{}) }

// Meta returns PF130's facts.
func (OrphanUnionRule) Meta() *RuleMeta { return &orphanUnion }

func (r OrphanUnionRule) Check(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		e := c.Entry(op)
		stateNames := -1 // operatorStates(op.Layout) counted once, when first needed
		for _, u := range unionStates(op.Layout) {
			c.stop.Check()
			if u.elements == 0 {
				continue
			}
			var why string
			sev := Warning
			orphan := e.Orphan(u.name)
			switch {
			case orphan != nil:
				why = fmt.Sprintf("`%s` is state of %s, which %s never registers: it is legacy state left under the same uid.", u.name, orphan.From, e.Name)
			case e != nil && !e.Claims(u.name):
				why = fmt.Sprintf("`%s` is not a state that %s registers.", u.name, e.Name)
				if !u.wholesale() {
					sev = Info
				}
			case e == nil && u.wholesale():
				why = fmt.Sprintf("Every one of the %d old subtasks stored the same %s of `%s` (heuristic: legitimate union users write only their own share).", len(u.perSubtask), plural(u.perSubtask[0], "element"), u.name)
				if stateNames < 0 {
					stateNames = len(operatorStates(op.Layout))
				}
				if stateNames < 2 {
					sev = Info
				}
			default:
				continue
			}
			p := int64(op.NewParallelism)
			next := p * u.elements
			f := c.finding(r, sev, op)
			f.StateName = u.name
			f.AffectedSubtasks = rangeFrom(0, int32(p))
			holder := "each of the " + plural(p, "new subtask") + " holds"
			if p == 1 {
				holder = "the new subtask holds"
			}
			f.Message = fmt.Sprintf("%s holds an orphaned UNION state: %s It has %s (%s) in this checkpoint, written by %s. Forecast: after this restore %s all %s and writes them back, so the next checkpoint holds %s (%s) with %s of offsets in _metadata; restoring that checkpoint ships %s (%s of offsets) in every subtask's TaskDeploymentDescriptor, and each further restore multiplies it by the parallelism again.",
				upperFirst(opLabel(op, e)), why, plural(u.elements, "element"), bytesText(u.bytes), plural(int64(len(u.perSubtask)), "old subtask"), holder, plural(u.elements, "element"),
				plural(next, "element"), bytesText(p*u.bytes), bytesText(8*next), plural(next, "element"), bytesText(8*next))
			f.Message += " " + frameForecast(8*u.elements, p, c.Options.frameSize())
			if perSub := u.bytes; perSub > 0 && perSub < c.Options.inlineThreshold() {
				f.Message += fmt.Sprintf(" While each subtask's stream stays under the inline threshold (%s) the element bytes travel inline too.", bytesText(c.Options.inlineThreshold()))
			}
			if orphan != nil {
				f.Remediation = orphan.Remediation
				f.References = append(f.References, orphan.References...)
			} else {
				f.Remediation = orphanUnion.remedy("")
			}
			if e != nil {
				f.References = dedupe(append(f.References, e.References...))
			}
			out = append(out, f)
		}
	})
	return out
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
