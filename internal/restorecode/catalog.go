package restorecode

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/findings"
)

// catalogIDPrefix starts the ID of every catalog entry the analysis writes, so that a later
// analysis of the same class replaces it when the catalogs are merged.
const catalogIDPrefix = "analysis:"

// consequences says, per label, what the restore code does with the restored elements, for the
// consequence text of the catalog entry.
var consequences = map[string]string{
	OneUnguarded:   "takes the first restored element without checking that one exists: a subtask restored with an empty list throws (NoSuchElementException or similar) and the job restarts in a loop",
	ExactlyOne:     "requires exactly one restored element: an empty list or several elements throw",
	AtMostOne:      "throws when more than one element is restored",
	FirstOnly:      "reads only the first restored element: the elements of the other old subtasks are silently dropped",
	MergeAll:       "reads every restored element",
	UnionFilter:    "reads every element of the union state and keeps those this subtask owns",
	OrderDependent: "depends on the position of the restored elements",
	NotRead:        "never reads the restored elements",
	Unknown:        "hands the restored elements to code the analysis cannot follow, so their use is not known",
}

// remediations says, per label that can fail a restore, what the user can do.
var remediations = map[string]string{
	OneUnguarded: "Keep the operator's parallelism at or below the number of elements the state holds (the nearest safe parallelism), or guard the read (hasNext() before next(), isEmpty() before get(0)) and redeploy before rescaling.",
	ExactlyOne:   "Keep the operator's parallelism equal to the number of elements the state holds, or make the restore code accept none or several elements before rescaling.",
	AtMostOne:    "Do not scale the operator down below the number of elements the state holds, or make the restore code merge several elements.",
	FirstOnly:    "Do not scale the operator down: its restore code keeps only the first element. Make it merge all elements (loop over the restored list) before scaling down.",
}

// Catalog turns the report into catalog entries in the shape of internal/findings' catalog.json,
// so that `check --catalog`, `--job-jar` and the daemon's catalogs use them like hand-written
// entries: one entry per class that registers named states, recognised in a checkpoint by those
// names and modes (its fingerprint), with one rule per state saying what the restore code
// assumes and where the analysis saw it. A FIRST-ONLY state is an error: on scale-down its
// dropped elements are lost silently. UNKNOWN asks PF170 to report empty subtasks, as for an
// operator the catalog does not know.
func (r *Report) Catalog() *findings.Catalog {
	cat := &findings.Catalog{Entries: []findings.CatalogEntry{}, Bugs: []findings.Bug{}}
	for _, c := range r.Classes {
		if e, ok := catalogEntry(c); ok {
			cat.Entries = append(cat.Entries, e)
		}
	}
	return cat
}

func catalogEntry(c ClassReport) (findings.CatalogEntry, bool) {
	simple := c.Class[strings.LastIndexByte(c.Class, '.')+1:]
	e := findings.CatalogEntry{
		ID:    catalogIDPrefix + c.Class,
		Name:  simple + " (restore code read from " + jarName(c.Jar) + ")",
		Class: c.Class,
		Notes: "Written by preflight analyze from the class's bytecode.",
	}
	for _, s := range c.States {
		if s.Name == "" || s.Name == NameNotConstant {
			continue // not a constant: nothing to recognise it by
		}
		e.Fingerprint.States = append(e.Fingerprint.States, findings.StateMode{Name: s.Name, Mode: s.Mode})
		rule := findings.StateRule{Name: s.Name, Mode: s.Mode, Assumption: s.Assumption,
			Consequence: fmt.Sprintf("%s %s (%s).", simple, consequences[s.Assumption], evidenceText(c.Class, s.Evidence))}
		rule.Remediation = remediations[s.Assumption]
		if rule.Remediation != "" && len(s.Evidence) > 0 {
			rule.Remediation += fmt.Sprintf(" The read is in %s.%s.", simple, s.Evidence[0].Method)
		}
		switch s.Assumption {
		case FirstOnly:
			rule.Severity = "error"
		case Unknown:
			rule.InfoWhenEmpty = true
		}
		e.States = append(e.States, rule)
	}
	if len(e.States) == 0 {
		return e, false
	}
	// The job's own bytecode is more specific than a hand entry that shares its state names.
	e.Fingerprint.Priority = 100
	return e, true
}

// jarName is the last element of a jar's path or URI ("job.jar"): the entry's name then reads the
// same whether the jar was analyzed in-process from a relative path or by the daemon from a URI.
func jarName(jar string) string {
	jar = strings.TrimRight(jar, "/\\")
	return jar[strings.LastIndexAny(jar, "/\\")+1:]
}

// evidenceText names where the analysis saw the decisive instructions: "seen in
// PendingCommitOperator.initializeState, line 37, bytecode offset 12".
func evidenceText(class string, ev []Evidence) string {
	if len(ev) == 0 {
		return "no read on the restore path"
	}
	var parts []string
	for _, x := range ev[:min(len(ev), 3)] {
		owner := x.Class
		if owner == "" {
			owner = class
		}
		where := owner[strings.LastIndexByte(owner, '.')+1:] + "." + x.Method
		if x.Line > 0 {
			where += fmt.Sprintf(", line %d", x.Line)
		}
		parts = append(parts, fmt.Sprintf("%s, bytecode offset %d", where, x.Offset))
	}
	if len(ev) > 3 {
		parts = append(parts, fmt.Sprintf("and %d more places", len(ev)-3))
	}
	return "seen in " + strings.Join(parts, "; ")
}

// Disagreements lists, one line each, the states where an entry of the analysis and an entry of
// cat for the same class (by class name) label a state differently: the analysis read the code
// that will run, the hand entry may describe another version.
func Disagreements(cat, analysis *findings.Catalog) []string {
	byClass := map[string]*findings.CatalogEntry{}
	for i := range cat.Entries {
		if e := &cat.Entries[i]; e.Class != "" && !strings.HasPrefix(e.ID, catalogIDPrefix) {
			byClass[e.Class] = e
		}
	}
	var out []string
	for _, a := range analysis.Entries {
		hand := byClass[a.Class]
		if hand == nil {
			continue
		}
		for _, s := range a.States {
			for _, h := range hand.StateRules(s.Name) {
				if h.Assumption != s.Assumption && !(h.Assumption == findings.MergeAll && s.Assumption == NotRead) {
					out = append(out, fmt.Sprintf("%s: the bytecode analysis labels state %q %s, the catalog entry %q says %s; the analysis is used",
						a.Class, s.Name, s.Assumption, hand.ID, h.Assumption))
					break
				}
			}
		}
	}
	return out
}
