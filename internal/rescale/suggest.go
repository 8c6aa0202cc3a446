package rescale

import (
	"fmt"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"slices"
	"strings"
)

// Limits of the suggestions for a plan key that names nothing: the error path must stay cheap on
// a job of a million operators, so only the first suggestScan operators are compared, each key
// by at most suggestRunes characters.
const (
	suggestScan  = 10000
	suggestRunes = 64
	suggestMax   = 3
)

// suggest names the checkpoint operators whose uid, name or ID is closest to key, for the error
// of a key that names no operator: "; closest: uid "compact-operator" (ID 0d9ffb4f…)". Empty
// when nothing is close (an edit distance above a third of the key's length, at least 2).
func (r *resolver) suggest(key string) string {
	type cand struct {
		text string
		dist int
		i    int
	}
	limit := max(2, len([]rune(key))/3)
	var best []cand
	consider := func(text string, i int) {
		if text == "" || slices.ContainsFunc(best, func(c cand) bool { return c.i == i }) {
			return
		}
		d := editDistance(strings.ToLower(key), strings.ToLower(text))
		if d <= limit {
			best = append(best, cand{text, d, i})
		}
	}
	for i := range r.layout.Operators[:min(len(r.layout.Operators), suggestScan)] {
		r.stop.Check()
		op := &r.layout.Operators[i]
		if id := op.ID.String(); len(key) >= checkpoint.MinIDPrefix && len(key) <= len(id) {
			consider(id[:len(key)], i) // a mistyped short ID
		}
		consider(op.UID, i)
		consider(op.Name, i)
	}
	if len(best) == 0 {
		return ""
	}
	slices.SortStableFunc(best, func(a, b cand) int { return a.dist - b.dist })
	var list []string
	for _, c := range best[:min(len(best), suggestMax)] {
		list = append(list, r.describe(r.layout.Operators[c.i].ID))
	}
	return "; closest: " + strings.Join(list, ", ")
}

// editDistance is the Levenshtein distance of a and b, each cut to suggestRunes runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	ra, rb = ra[:min(len(ra), suggestRunes)], rb[:min(len(rb), suggestRunes)]
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// unknownKey is the error of a plan key that names no operator of the checkpoint or the plan.
func (r *resolver) unknownKey(field, key string) error {
	return &PlanError{Field: field, Key: key, Msg: fmt.Sprintf("names no operator of the checkpoint or the plan%s", r.suggest(key))}
}
