package findings

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file renders the rule tables (RuleMeta) and the catalog's known bugs for people: the
// generated docs/rules.md (internal/findings/gen), and `preflight rules` in text, Markdown and
// JSON. Nothing here is hand-written per rule: a new rule appears by registering its table.

// RuleDoc is one rule as `preflight rules --output json` prints it.
type RuleDoc struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Severity    string   `json:"severity"`
	Grading     string   `json:"grading,omitempty"`
	Cause       string   `json:"cause"`
	Remediation []Remedy `json:"remediation"`
	References  []string `json:"references,omitempty"`
	Bugs        []BugDoc `json:"bugs,omitempty"`
}

// BugDoc is one Flink issue a rule models, or one catalog bug.
type BugDoc struct {
	ID        string   `json:"id"`
	Component string   `json:"component,omitempty"`
	Summary   string   `json:"summary"`
	Affected  []string `json:"affected"`
	FixedIn   string   `json:"fixed_in"`
}

// MarshalJSON writes a Remedy with lower-case keys.
func (r Remedy) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		When string `json:"when,omitempty"`
		Text string `json:"text"`
	}{r.When, r.Text})
}

func bugDoc(b Bug) BugDoc {
	d := BugDoc{ID: b.ID, Component: b.Component, Summary: b.Summary, FixedIn: b.FixedIn}
	for _, r := range b.Affected {
		d.Affected = append(d.Affected, r.String())
	}
	if len(d.Affected) == 0 {
		d.Affected = []string{"all versions"}
	}
	return d
}

// docOnly holds the documentation of rules whose checks live outside this package (the
// classpath, lifecycle and job-placement rules), registered by those packages' init.
var docOnly []RuleMeta

// RegisterDoc adds the documentation of rules checked by another package, so that
// `preflight rules` and docs/rules.md list them: call it from that package's init, beside the
// rules' code. It panics on a duplicate ID or a missing ID, title, severity, cause or remedy.
func RegisterDoc(ms ...RuleMeta) {
	for _, m := range ms {
		if len(m.ID) != 5 || m.Title == "" || m.Severity == SeverityUnspecified || m.Cause == "" || len(m.Remedies) == 0 {
			panic(fmt.Sprintf("findings: rule %q is missing its ID, title, severity, cause or remedy", m.ID))
		}
		if RuleByID(m.ID) != nil {
			panic("findings: rule " + m.ID + " registered twice")
		}
		for _, x := range docOnly {
			if x.ID == m.ID {
				panic("findings: rule " + m.ID + " registered twice")
			}
		}
		docOnly = append(docOnly, m)
	}
}

// RuleDocs returns the documentation of every registered rule, in ID order: this package's
// rules and those other packages registered with RegisterDoc (import them to see theirs).
func RuleDocs() []RuleDoc {
	metas := append([]RuleMeta(nil), docOnly...)
	for _, r := range Rules() {
		metas = append(metas, *r.Meta())
	}
	sort.Slice(metas, func(i, j int) bool { return metas[i].ID < metas[j].ID })
	out := make([]RuleDoc, 0, len(metas))
	for _, m := range metas {
		d := RuleDoc{ID: m.ID, Title: m.Title, Severity: m.Severity.String(), Grading: m.Grading, Cause: m.Cause,
			Remediation: m.Remedies, References: m.References}
		for _, b := range m.Bugs {
			d.Bugs = append(d.Bugs, bugDoc(b))
		}
		out = append(out, d)
	}
	return out
}

// CatalogEntryDoc is one operator of the catalog as the docs list it: the restore assumption
// of each state it registers (with the bug that makes it fail), its rescale hazards and the
// states known to be left orphaned in it.
type CatalogEntryDoc struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	States  []string `json:"states"`
	Hazards []string `json:"hazards,omitempty"`
	Orphans []string `json:"orphans,omitempty"`
}

// CatalogEntryDocs returns the operators of the catalog (nil: the built-in one), in catalog order.
func CatalogEntryDocs(cat *Catalog) []CatalogEntryDoc {
	if cat == nil {
		cat = sharedDefault()
	}
	var out []CatalogEntryDoc
	for i := range cat.Entries {
		e := &cat.Entries[i]
		d := CatalogEntryDoc{ID: e.ID, Name: e.Name}
		if e.Assumption == Pinned {
			d.States = append(d.States, "operator PINNED (parallelism 1, max parallelism 1)")
		}
		for _, st := range e.States {
			s := "`" + st.Name + "` " + st.Assumption
			if st.Bug != "" {
				s += " (" + st.Bug + ")"
			}
			if st.Versions != nil {
				s += " in " + st.Versions.String()
			}
			d.States = append(d.States, s)
		}
		for _, h := range e.Hazards {
			s := h.When + " " + strings.ToUpper(h.Severity)
			if h.MinFactor > 1 {
				s += fmt.Sprintf(" from a factor of %g", h.MinFactor)
			}
			if h.Bug != "" {
				s += " (" + h.Bug + ")"
			}
			d.Hazards = append(d.Hazards, s)
		}
		for _, o := range e.Orphans {
			d.Orphans = append(d.Orphans, "`"+o.Name+"` from "+o.From)
		}
		out = append(out, d)
	}
	return out
}

// CatalogBugDocs returns the known bugs of the catalog (nil: the built-in one), in catalog order.
func CatalogBugDocs(cat *Catalog) []BugDoc {
	if cat == nil {
		cat = sharedDefault()
	}
	var out []BugDoc
	for _, b := range cat.Bugs {
		out = append(out, bugDoc(b))
	}
	return out
}

// SelectRuleDocs returns the documentation of the named rules (case-insensitive), in the order
// given; no ids means every rule. An unknown id is an error naming the known ones.
func SelectRuleDocs(ids []string) ([]RuleDoc, error) {
	all := RuleDocs()
	if len(ids) == 0 {
		return all, nil
	}
	var out []RuleDoc
	for _, id := range ids {
		found := false
		for _, d := range all {
			if strings.EqualFold(d.ID, strings.TrimSpace(id)) {
				out, found = append(out, d), true
				break
			}
		}
		if !found {
			known := make([]string, len(all))
			for i, d := range all {
				known[i] = d.ID
			}
			return nil, fmt.Errorf("unknown rule %q (known: %s)", id, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// WriteRulesJSON writes rules, catalog bugs and catalog operators as one JSON document (the
// catalog parts omitted when nil).
func WriteRulesJSON(w io.Writer, docs []RuleDoc, bugs []BugDoc, entries []CatalogEntryDoc) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Rules            []RuleDoc         `json:"rules"`
		CatalogBugs      []BugDoc          `json:"catalog_bugs,omitempty"`
		CatalogOperators []CatalogEntryDoc `json:"catalog_operators,omitempty"`
	}{docs, bugs, entries})
}

// WriteRulesText writes one paragraph per rule for a terminal.
func WriteRulesText(w io.Writer, docs []RuleDoc) error {
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s %-7s %s\n", d.ID, d.Severity, d.Title)
		if d.Grading != "" {
			fmt.Fprintf(&b, "  grading:  %s\n", d.Grading)
		}
		fmt.Fprintf(&b, "  cause:    %s\n", d.Cause)
		for _, r := range d.Remediation {
			fmt.Fprintf(&b, "  remedy:   %s\n", remedyLine(r))
		}
		for _, bug := range d.Bugs {
			fmt.Fprintf(&b, "  bug:      %s (affected: %s; fixed in %s): %s\n", bug.ID, strings.Join(bug.Affected, "; "), bug.FixedIn, bug.Summary)
		}
		if len(d.References) > 0 {
			fmt.Fprintf(&b, "  see:      %s\n", strings.Join(d.References, ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fmtVerb matches the verbs remedies use: %s, %d and their indexed forms (%[2]s).
var fmtVerb = regexp.MustCompile(`%(\[(\d+)\])?[sd]`)

// remedyLine renders a remedy for the docs, its fmt verbs replaced by the names in Args.
func remedyLine(r Remedy) string {
	next := 0
	text := fmtVerb.ReplaceAllStringFunc(r.Text, func(verb string) string {
		i := next
		if m := fmtVerb.FindStringSubmatch(verb); m[2] != "" {
			i, _ = strconv.Atoi(m[2])
			i--
		}
		next = i + 1
		if i >= 0 && i < len(r.Args) {
			return "<" + r.Args[i] + ">"
		}
		return "<…>"
	})
	if r.When == "" {
		return text
	}
	return "(" + r.When + ") " + text
}

// WriteRulesDoc writes docs/rules.md: every rule and the known bugs of the catalog (nil: the
// built-in one).
func WriteRulesDoc(w io.Writer, cat *Catalog) error {
	var b strings.Builder
	if err := WriteRulesMarkdown(&b, RuleDocs(), CatalogBugDocs(cat)); err != nil {
		return err
	}
	writeCatalogEntriesMarkdown(&b, CatalogEntryDocs(cat))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteRulesMarkdown writes a summary table, one section per rule, and the catalog bugs
// (section omitted when bugs is nil).
func WriteRulesMarkdown(w io.Writer, docs []RuleDoc, bugs []BugDoc) error {
	var b strings.Builder
	b.WriteString("# Preflight rules\n\n")
	b.WriteString("<!-- Generated by `go run ./internal/findings/gen` from the rule registry (internal/findings/rules_*.go,\n")
	b.WriteString("     internal/engine/job.go, internal/statefiles/rules.go, internal/classpath/rules.go,\n")
	b.WriteString("     internal/lifecycle/rules.go) and\n")
	b.WriteString("     internal/findings/catalog.json. Do not edit: TestRulesDocUpToDate fails when this file is stale. -->\n\n")
	b.WriteString("Every finding names one of these rules. The severity is the rule's highest; \"grading\" says when a\n")
	b.WriteString("finding is reported lower. Rules that model a Flink bug compare its affected versions with the\n")
	b.WriteString("restoring Flink version (`--flink-version`); an unknown version is assumed affected.\n\n")
	fmt.Fprintf(&b, "**Findings on many operators.** When a rule fires for the same cause on more than %d operators (the\n", MergedOperators)
	b.WriteString("same severity, states, new subtasks and text but for the operator), a report states it once: the\n")
	b.WriteString("finding is the first operator's in report order, its message counts the operators and names the\n")
	fmt.Fprintf(&b, "first %d, and `operator_ids` (JSON `operatorIds`) lists every one. On %d operators or fewer each keeps\n", MergedOperators, MergedOperators)
	b.WriteString("its own finding.\n\n")
	b.WriteString("| Rule | Severity | Title | Flink issues |\n|---|---|---|---|\n")
	for _, d := range docs {
		var ids []string
		for _, bug := range d.Bugs {
			ids = append(ids, bug.ID)
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s |\n", d.ID, strings.ToLower(d.ID), d.Severity, mdCell(d.Title), strings.Join(ids, ", "))
	}
	for _, d := range docs {
		fmt.Fprintf(&b, "\n## %s\n\n**%s** — %s\n\n", d.ID, d.Severity, d.Title)
		if d.Grading != "" {
			fmt.Fprintf(&b, "Grading: %s\n\n", d.Grading)
		}
		fmt.Fprintf(&b, "Cause: %s\n\n", d.Cause)
		if len(d.Bugs) > 0 {
			b.WriteString("| Issue | Affected versions | Fixed in | What happens |\n|---|---|---|---|\n")
			for _, bug := range d.Bugs {
				affected := componentTitle(bug.Component) + " " + strings.Join(bug.Affected, "; ")
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", bug.ID, mdCell(affected), mdCell(bug.FixedIn), mdCell(bug.Summary))
			}
			b.WriteString("\n")
		}
		b.WriteString("Remediation:\n\n")
		for _, r := range d.Remediation {
			fmt.Fprintf(&b, "- %s\n", remedyLine(r))
		}
		if len(d.References) > 0 {
			b.WriteString("\nReferences: " + strings.Join(d.References, ", ") + "\n")
		}
	}
	if bugs == nil {
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n## Catalog bugs\n\n")
	b.WriteString("Known bugs of operator implementations, from internal/findings/catalog.json. PF101-PF105 apply a\n")
	b.WriteString("catalog entry's state rule or hazard only when its bug affects the restoring version: the Flink version\n")
	b.WriteString("(--flink-version) or, for a connector's bug, the connector version (--connector-version NAME=VERSION,\n")
	b.WriteString("findings.Options.ConnectorVersions). An unknown version is assumed affected, and the finding says so.\n")
	b.WriteString("A state rule may also be confined to some versions of a component (\"in iceberg 1.1.0 and later\"):\n")
	b.WriteString("the restore code it describes is that of those versions.\n\n")
	b.WriteString("| Bug | Component | Affected | Fixed in | Summary |\n|---|---|---|---|---|\n")
	for _, bug := range bugs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", bug.ID, bug.Component, mdCell(strings.Join(bug.Affected, "; ")), mdCell(bug.FixedIn), mdCell(bug.Summary))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCatalogEntriesMarkdown appends the catalog's operators: what PF101-PF105 and PF130 know.
func writeCatalogEntriesMarkdown(b *strings.Builder, entries []CatalogEntryDoc) {
	b.WriteString("\n## Catalog operators\n\n")
	b.WriteString("What the catalog knows per operator implementation (internal/findings/catalog.json; a user catalog adds\n")
	b.WriteString("entries with --catalog): the restore assumption of each state (labels: ONE-UNGUARDED, FIRST-ONLY,\n")
	b.WriteString("AT-MOST-ONE, EXACTLY-ONE, MERGE-ALL, UNION-FILTER, PINNED, ORDER-DEPENDENT), rescale hazards, and\n")
	b.WriteString("states known to be left orphaned by a predecessor under the same uid.\n\n")
	b.WriteString("| Entry | Operator | States | Hazards | Orphans |\n|---|---|---|---|---|\n")
	for _, e := range entries {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", e.ID, mdCell(e.Name), mdCell(strings.Join(e.States, "; ")), mdCell(strings.Join(e.Hazards, "; ")), mdCell(strings.Join(e.Orphans, "; ")))
	}
}

// mdCell keeps a table cell on one line and its pipes literal.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", "\\|")
}
