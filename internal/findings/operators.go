package findings

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/units"
)

// MergedOperators is how many operators a rule may fire on for the same cause before a report
// states it once: on more, OperatorMerger merges their findings into one that counts them, names
// the first MergedOperators and lists them all in Finding.OperatorIDs. A handful of findings is
// read one by one; 100,000 copies of one sentence are not read at all.
const MergedOperators = 5

// OperatorMerger merges findings of the same rule and cause on many operators as a check's
// ranges of vertices come (Add), so that a report holds one finding and a list of operator IDs
// instead of a message and a finding per operator. Findings are of the same cause when they are
// alike but for the operator: rule, severity, title, catalog entry, states, affected new
// subtasks, references, and message and remediation with the operator's ID, quoted name and uid
// taken out. A group of at most MergedOperators findings is kept as it is; a larger one becomes
// its first finding in report order (Finding.Order) with the count and the first few operators
// before its message, and OperatorIDs. Findings that concern no operator pass through.
//
// It keeps, per cause, the first MergedOperators findings and the ID and position of every
// operator, 20 bytes (the IDs become strings only in Findings, which a check calls once its
// Layout is no longer needed). The zero value is ready to use.
type OperatorMerger struct {
	byKey  map[causeKey]*operatorGroup
	groups []*operatorGroup
	other  []Finding
}

// operatorGroup is one cause's findings: the first few in report order, and every operator.
type operatorGroup struct {
	first []Finding // at most MergedOperators, ascending by Order
	ops   []operatorRef
}

// operatorRef is an operator a group's finding concerns.
type operatorRef struct {
	position int32
	id       checkpoint.OperatorID
}

// Add takes a range's findings (in any order).
func (m *OperatorMerger) Add(fs []Finding) {
	for i := range fs {
		f := &fs[i]
		id, ok := operatorID(f.OperatorID)
		if !ok || len(f.OperatorIDs) > 0 {
			m.other = append(m.other, *f)
			continue
		}
		if m.byKey == nil {
			m.byKey = map[causeKey]*operatorGroup{}
		}
		key := causeOf(f)
		g := m.byKey[key]
		if g == nil {
			g = &operatorGroup{}
			m.byKey[key] = g
			m.groups = append(m.groups, g)
		}
		g.add(f, id)
	}
}

// add keeps f among the group's first findings if it is one of the first MergedOperators.
func (g *operatorGroup) add(f *Finding, id checkpoint.OperatorID) {
	g.ops = append(g.ops, operatorRef{position: f.Position, id: id})
	if slices.ContainsFunc(g.first, func(e Finding) bool { return e.OperatorID == f.OperatorID }) {
		return // the same cause on the same operator again: one finding says it
	}
	o := f.Order()
	i, _ := slices.BinarySearchFunc(g.first, o, func(e Finding, o Order) int {
		if e.Order().Before(o) {
			return -1
		}
		return 1
	})
	if i >= MergedOperators {
		return
	}
	if len(g.first) == MergedOperators {
		g.first = g.first[:MergedOperators-1]
	}
	g.first = slices.Insert(g.first, i, *f)
}

// Findings returns the merged findings and those that passed through, unsorted. The merger is
// empty afterwards.
func (m *OperatorMerger) Findings() []Finding {
	out := m.other
	for _, g := range m.groups {
		g.distinct()
		if len(g.ops) <= MergedOperators {
			out = append(out, g.first...)
			continue
		}
		out = append(out, g.merged())
	}
	*m = OperatorMerger{}
	return out
}

// distinct sorts the group's operators into report order and drops repeats (a rule that gives
// one operator the same cause twice), so that the threshold counts operators, not findings.
func (g *operatorGroup) distinct() {
	slices.SortFunc(g.ops, func(a, b operatorRef) int {
		return cmp.Or(cmp.Compare(a.position, b.position), bytes.Compare(a.id[:], b.id[:]))
	})
	g.ops = slices.CompactFunc(g.ops, func(a, b operatorRef) bool { return a.id == b.id })
}

// merged is the group's one finding: its first, with the operators counted and the first few
// named before the message, and every operator's ID.
func (g *operatorGroup) merged() Finding {
	f := g.first[0]
	ids := make([]string, len(g.ops))
	for i, o := range g.ops {
		ids[i] = o.id.String()
	}
	g.ops = nil
	f.OperatorIDs = ids
	f.Message = operatorsText(g.first, len(ids)) + f.Message
	return f
}

// operatorID parses the operator ID of a finding as checkpoint.OperatorID.String writes it (32
// lower-case hex digits); a finding without one is not merged. Upper-case hex is refused: the
// merged finding lists its operators as OperatorID.String writes them, which would then differ
// from the finding's own ID.
func operatorID(s string) (checkpoint.OperatorID, bool) {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r >= 'A' && r <= 'F' }) {
		return checkpoint.OperatorID{}, false
	}
	id, err := checkpoint.ParseOperatorID(s)
	return id, err == nil
}

// operatorsText counts and names a merged finding's operators before its first's message
// (OperatorsText).
func operatorsText(first []Finding, n int) string {
	names := make([]string, len(first))
	for i := range first {
		names[i] = operatorName(&first[i])
	}
	return OperatorsText(names, n)
}

// OperatorsText is what a finding standing for n operators says before the first's message,
// naming the first few (names): "100,000 operators alike (#1 op-0, #2 op-1, #3 op-2, #4 op-3,
// #5 op-4 and 99,995 more), each as the first: ".
func OperatorsText(names []string, n int) string {
	var b strings.Builder
	b.WriteString(units.Thousands(int64(n)) + " operators alike (")
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
	}
	if rest := n - len(names); rest > 0 {
		b.WriteString(" and " + units.Thousands(int64(rest)) + " more")
	}
	b.WriteString("), each as the first: ")
	return b.String()
}

// operatorName is how a merged finding's message names one of its operators: its position and
// name (else uid, else ID), as the operators table does.
func operatorName(f *Finding) string {
	name := cmp.Or(f.OperatorName, f.OperatorUID, f.OperatorID)
	if f.Position > 0 {
		return "#" + strconv.Itoa(int(f.Position)) + " " + name
	}
	return name
}

// causeKey is what f says besides which operator it concerns: equal for findings of the same
// rule and cause on different operators.
type causeKey struct {
	rule, title, catalog, state, affected, references, message, remediation string
	// states is the SHA-256 of the state names: a finding can list hundreds of thousands, and
	// the key lives as long as the merger.
	states   [sha256.Size]byte
	severity Severity
}

// causeOf is f's causeKey.
func causeOf(f *Finding) causeKey {
	return causeKey{rule: f.RuleID, title: f.Title, catalog: f.CatalogEntry, state: f.StateName,
		states: namesDigest(f.StateNames), affected: units.Ranges(f.AffectedSubtasks),
		references: strings.Join(f.References, "\x00"), message: withoutOperator(f, f.Message),
		remediation: withoutOperator(f, f.Remediation), severity: f.Severity}
}

// namesDigest is the SHA-256 of names, the list prefixed by its count and each name by its
// length, so that no two lists share an encoding.
func namesDigest(names []string) [sha256.Size]byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(names)))])
	for _, name := range names {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(name)))])
		io.WriteString(h, name)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// withoutOperator takes f's operator out of s: its ID and vertex ID, its quoted name and its
// uid, as opLabel writes them. (ReplaceAll returns s itself when there is nothing to replace.)
func withoutOperator(f *Finding, s string) string {
	s = strings.ReplaceAll(s, f.OperatorID, "\x02")
	if f.VertexID != f.OperatorID && f.VertexID != "" {
		s = strings.ReplaceAll(s, f.VertexID, "\x03")
	}
	if f.OperatorName != "" {
		s = strings.ReplaceAll(s, `"`+f.OperatorName+`"`, "\x04")
	}
	if f.OperatorUID != "" {
		s = strings.ReplaceAll(s, "uid "+f.OperatorUID, "\x05")
	}
	return s
}
