package findings

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Restore-assumption labels (operator-state-catalog.md §0): what an operator's restore code
// assumes about the elements it receives for one state name.
const (
	OneUnguarded   = "ONE-UNGUARDED"   // takes the first element without checking: 0 elements throw
	FirstOnly      = "FIRST-ONLY"      // reads only the first element: further ones are dropped
	AtMostOne      = "AT-MOST-ONE"     // throws on more than one element
	ExactlyOne     = "EXACTLY-ONE"     // throws on anything but one element
	MergeAll       = "MERGE-ALL"       // merges 0..n elements: safe
	UnionFilter    = "UNION-FILTER"    // union state, keeps what it owns: safe, multiplied by P
	Pinned         = "PINNED"          // parallelism 1 and max parallelism 1
	OrderDependent = "ORDER-DEPENDENT" // relies on consecutive round-robin assignment
	// Labels only the bytecode analysis (preflight analyze) writes.
	NotRead = "NOT-READ" // registered, never read on restore: safe
	Unknown = "UNKNOWN"  // the elements escape the analysis: treated as an unknown operator's
)

var knownAssumptions = map[string]bool{OneUnguarded: true, FirstOnly: true, AtMostOne: true,
	ExactlyOne: true, MergeAll: true, UnionFilter: true, Pinned: true, OrderDependent: true,
	NotRead: true, Unknown: true}

//go:embed catalog.json
var builtinCatalog []byte

// Catalog is the operator knowledge base: which operators exist, how to recognise them in a
// checkpoint, what their restore code assumes, and which known bugs apply to which versions.
type Catalog struct {
	Entries []CatalogEntry `json:"entries"`
	Bugs    []Bug          `json:"bugs"`

	bugs map[string]*Bug
	ids  map[checkpoint.OperatorID][]int // operator ID (uid hash) -> entry indexes
	// fpNames are the state names the fingerprints list (fingerprintStates), set by index.
	fpNames map[string]bool
}

// CatalogEntry describes one operator implementation.
type CatalogEntry struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Class string `json:"class,omitempty"`
	// ClassAliases are other binary names of the same implementation, e.g. the Flink 2.x
	// `.legacy` package of a class that moved.
	ClassAliases []string    `json:"class_aliases,omitempty"`
	Fingerprint  Fingerprint `json:"fingerprint"`
	// States lists the state names this implementation registers (claims) with what its
	// restore code assumes about each.
	States []StateRule `json:"states"`
	// Assumption is the operator-level label (PINNED, or the dominant state label).
	Assumption string `json:"assumption,omitempty"`
	// Orphans are state names known to be left behind in this operator by a predecessor
	// implementation under the same uid (never read, written back forever).
	Orphans []OrphanRule `json:"orphans,omitempty"`
	// Hazards are known problems of the implementation when its parallelism changes that the
	// element counts alone do not reveal (committer stalls, lingering transactions).
	Hazards     []Hazard `json:"hazards,omitempty"`
	References  []string `json:"references,omitempty"`
	Remediation string   `json:"remediation,omitempty"`
	Notes       string   `json:"notes,omitempty"`
	// User is set for entries loaded from a user file.
	User bool `json:"-"`
}

// Fingerprint says how to recognise the operator in a checkpoint.
type Fingerprint struct {
	// States must all be present with the given mode (mode "" matches any).
	States []StateMode `json:"states,omitempty"`
	// MaxParallelism, when > 0, must equal the stored max parallelism.
	MaxParallelism int `json:"max_parallelism,omitempty"`
	// Coordinator, when true, requires coordinator state (FLIP-27 sources).
	Coordinator bool `json:"coordinator,omitempty"`
	// UIDs are exact uids (V5+ uid field, or compared by their hash in older formats); UID
	// suffixes match planner-generated uids such as "3_compact-operator".
	UIDs        []string `json:"uids,omitempty"`
	UIDSuffixes []string `json:"uid_suffixes,omitempty"`
	// OperatorIDs are known operator IDs (hex), e.g. precomputed hashes of fixed uids.
	OperatorIDs []string `json:"operator_ids,omitempty"`
	// NameContains matches V5+ operator names (case-insensitive substring).
	NameContains []string `json:"name_contains,omitempty"`
	// UIDOnly entries are never identified from state names alone (their states are shared
	// with other operators): only by uid, ID or name.
	UIDOnly bool `json:"uid_only,omitempty"`
	// Priority breaks ties between entries matching the same number of states.
	Priority int `json:"priority,omitempty"`
}

// StateMode is a state name with its distribution mode ("SPLIT_DISTRIBUTE", "UNION",
// "BROADCAST", or "" for any).
type StateMode struct {
	Name string `json:"name"`
	Mode string `json:"mode,omitempty"`
}

// StateRule is what an operator's restore code assumes about one of its states.
type StateRule struct {
	Name       string `json:"name"`
	Mode       string `json:"mode,omitempty"`
	Assumption string `json:"assumption"`
	// Bug links the assumption to a known bug (Catalog.Bugs); its versions decide whether the
	// rule applies. Empty: the assumption holds in all versions.
	Bug string `json:"bug,omitempty"`
	// Severity overrides the rule's default severity ("info", "warning", "error").
	Severity string `json:"severity,omitempty"`
	// Consequence describes what happens when the assumption is violated.
	Consequence string `json:"consequence,omitempty"`
	// InfoWhenEmpty asks PF170 to mention new subtasks that receive no element even though the
	// operator copes (generic operators whose plugins may not, e.g. sink-v2 writers).
	InfoWhenEmpty bool   `json:"info_when_empty,omitempty"`
	Remediation   string `json:"remediation,omitempty"`
	// Versions confines the assumption to a range of a component's versions (the restore code
	// changed there); outside it the rule does not apply. Nil: all versions.
	Versions *VersionScope `json:"versions,omitempty"`
}

// Hazard is a known rescale problem of an operator implementation.
type Hazard struct {
	// When is "scale-up", "scale-down" or "rescale" (either direction).
	When string `json:"when"`
	// MinFactor, when > 1, requires the parallelism to change by at least this factor (old/new
	// for scale-down, new/old for scale-up).
	MinFactor float64 `json:"min_factor,omitempty"`
	Bug       string  `json:"bug,omitempty"`
	Severity  string  `json:"severity"`
	Message   string  `json:"message"`
	// Remediation and References of the finding.
	Remediation string   `json:"remediation,omitempty"`
	References  []string `json:"references,omitempty"`
}

// OrphanRule names a state known to be unclaimed by the operator's implementation.
type OrphanRule struct {
	Name        string   `json:"name"`
	From        string   `json:"from"` // the implementation that registered it
	References  []string `json:"references,omitempty"`
	Remediation string   `json:"remediation,omitempty"`
}

// Bug is a known defect with its affected and fixed versions.
type Bug struct {
	ID string `json:"id"` // Jira id, or a PR name when there is none
	// Component is whose version the ranges refer to: "flink" (compared with
	// Options.FlinkVersion) or a connector name (compared with Options.ConnectorVersions;
	// assumed affected when the caller does not give it).
	Component  string         `json:"component"`
	Affected   []VersionRange `json:"affected,omitempty"`
	FixedIn    string         `json:"fixed_in,omitempty"` // human text: "unfixed", "PR #4457 (merged)"
	Summary    string         `json:"summary"`
	References []string       `json:"references,omitempty"`
}

// Applies decides whether the bug applies to the restoring cluster: the Flink version or, for a
// connector's bug, the connector version from o; an unknown or unparsable version counts as
// affected. The note explains the decision for the finding message.
func (b *Bug) Applies(o Options) (applies bool, note string) {
	if b == nil {
		return true, ""
	}
	rangeText, name := rangesText(b.Affected), componentTitle(b.Component)
	switch {
	case rangeText == "all versions":
		rangeText = "(all versions)"
	case !isFlinkComponent(b.Component):
		rangeText = "versions " + rangeText
	}
	m, given := matchVersions(b.Component, b.Affected, o)
	switch {
	case m == versionUnknown:
		return true, fmt.Sprintf("%s affects %s %s; %s, so it is assumed affected.", b.ID, name, rangeText, unknownVersionText(b.Component))
	case m == versionUnparsed:
		return true, fmt.Sprintf("%s affects %s %s; the %s version %q could not be parsed, so it is assumed affected.", b.ID, name, rangeText, name, given)
	case m == versionIn && len(b.Affected) == 0:
		v, _ := ParseVersion(given)
		return true, fmt.Sprintf("%s affects all %s versions, including %s.", b.ID, name, v)
	case m == versionIn:
		return true, fmt.Sprintf("%s affects %s %s, which includes %s.", b.ID, name, rangeText, given)
	}
	return false, fmt.Sprintf("%s does not affect %s %s (affected: %s).", b.ID, name, given, rangesText(b.Affected))
}

// VersionScope confines a state rule to the versions [From, Before) of a component ("flink" or
// a connector as Options.ConnectorVersions names it): the restore code it describes is that of
// those versions, e.g. the code after a fix. Empty From: since the beginning; empty Before: up
// to now.
type VersionScope struct {
	Component string `json:"component"`
	From      string `json:"from,omitempty"`
	Before    string `json:"before,omitempty"`
}

func (s *VersionScope) ranges() []VersionRange {
	return []VersionRange{{Introduced: s.From, Fixed: s.Before}}
}

// String renders the scope for messages and docs: "iceberg 1.1.0 and later".
func (s *VersionScope) String() string {
	name := componentTitle(s.Component)
	switch {
	case s.From == "" && s.Before == "":
		return "all " + name + " versions"
	case s.Before == "":
		return name + " " + s.From + " and later"
	case s.From == "":
		return name + " before " + s.Before
	}
	return name + " " + s.From + " up to (not including) " + s.Before
}

func (s *VersionScope) check() error {
	if err := checkComponent(s.Component); err != nil {
		return err
	}
	if s.From == "" && s.Before == "" {
		return fmt.Errorf("versions of %s: give from, before or both", s.Component)
	}
	if err := checkRange(VersionRange{Introduced: s.From, Fixed: s.Before}); err != nil {
		return fmt.Errorf("versions of %s: %v", s.Component, err)
	}
	return nil
}

// applies decides whether a state rule describes the restoring cluster's code: its bug (if any)
// affects the versions in o and they are in its scope (if any). Unknown versions count as in
// both: the finding then says so.
func (r *StateRule) applies(cat *Catalog, o Options) (bool, string) {
	applies, note := cat.Bug(r.Bug).Applies(o)
	if !applies || r.Versions == nil {
		return applies, note
	}
	scope := r.Versions
	m, given := matchVersions(scope.Component, scope.ranges(), o)
	var scoped string
	switch m {
	case versionOut:
		return false, fmt.Sprintf("The %s label describes %s, not %s.", r.Assumption, scope, given)
	case versionIn:
		scoped = fmt.Sprintf("The %s label describes %s, which includes %s.", r.Assumption, scope, given)
	case versionUnknown:
		scoped = fmt.Sprintf("The %s label describes %s; %s, so it is assumed to apply.", r.Assumption, scope, unknownVersionText(scope.Component))
	default:
		scoped = fmt.Sprintf("The %s label describes %s; the %s version %q could not be parsed, so it is assumed to apply.", r.Assumption, scope, componentTitle(scope.Component), given)
	}
	return true, strings.TrimSpace(note + " " + scoped)
}

// Bug returns the named bug, or nil.
func (c *Catalog) Bug(id string) *Bug {
	if c == nil || id == "" {
		return nil
	}
	return c.bugs[id]
}

// Entry returns the entry with the given ID, or nil.
func (c *Catalog) Entry(id string) *CatalogEntry {
	if c == nil {
		return nil
	}
	return firstWhere(c.Entries, func(e *CatalogEntry) bool { return e.ID == id })
}

// sharedDefault is the built-in catalog parsed once, for Check calls without a catalog; it is
// never modified.
var sharedDefault = sync.OnceValue(DefaultCatalog)

// DefaultCatalog returns the built-in catalog. It panics if the embedded data is invalid (a
// test guards that).
func DefaultCatalog() *Catalog {
	c, err := parseCatalog(builtinCatalog, "catalog.json (built in)", false)
	if err != nil {
		panic(err)
	}
	if err := c.index(); err != nil {
		panic(err)
	}
	return c
}

// LoadCatalog returns the built-in catalog merged with user catalog files (same JSON shape). A
// user entry with the ID of a built-in entry replaces it; new IDs are added. User entries come
// first in identification ties, so a user's uid wins over a built-in fingerprint.
func LoadCatalog(paths ...string) (*Catalog, error) {
	c, err := parseCatalog(builtinCatalog, "catalog.json (built in)", false)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		u, err := parseCatalog(data, p, true)
		if err != nil {
			return nil, err
		}
		c.merge(u)
	}
	if err := c.index(); err != nil {
		return nil, err
	}
	return c, nil
}

// Clone returns a copy of c that MergeJSON can extend without changing c (which may be shared,
// as an engine's catalog is between requests).
func (c *Catalog) Clone() (*Catalog, error) {
	n := &Catalog{Entries: slices.Clone(c.Entries), Bugs: slices.Clone(c.Bugs)}
	if err := n.index(); err != nil {
		return nil, err
	}
	return n, nil
}

// MergeJSON merges a user catalog given as JSON bytes (for callers that do not read files).
func (c *Catalog) MergeJSON(data []byte, source string) error {
	u, err := parseCatalog(data, source, true)
	if err != nil {
		return err
	}
	c.merge(u)
	return c.index()
}

func (c *Catalog) merge(u *Catalog) {
	c.Entries = mergeByID(c.Entries, u.Entries, func(e *CatalogEntry) string { return e.ID })
	c.Bugs = mergeByID(c.Bugs, u.Bugs, func(b *Bug) string { return b.ID })
}

// mergeByID replaces the elements of dst that have the ID of an element of src by it, and appends
// the elements of src whose ID dst lacks.
func mergeByID[T any](dst, src []T, id func(*T) string) []T {
	for _, x := range src {
		replaced := false
		for i := range dst {
			if id(&dst[i]) == id(&x) {
				dst[i] = x
				replaced = true
			}
		}
		if !replaced {
			dst = append(dst, x)
		}
	}
	return dst
}

func parseCatalog(data []byte, source string, user bool) (*Catalog, error) {
	var c Catalog
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("catalog %s: %w", source, err)
	}
	for i := range c.Entries {
		e := &c.Entries[i]
		e.User = user
		if e.ID == "" {
			return nil, fmt.Errorf("catalog %s: entry %d has no id", source, i)
		}
		if e.Name == "" {
			e.Name = e.ID
		}
		for _, s := range e.States {
			if s.Name == "" {
				return nil, fmt.Errorf("catalog %s: entry %s: state without a name", source, e.ID)
			}
			if !knownAssumptions[s.Assumption] {
				return nil, fmt.Errorf("catalog %s: entry %s state %s: unknown assumption %q", source, e.ID, s.Name, s.Assumption)
			}
			if _, err := ParseSeverity(s.Severity); err != nil {
				return nil, fmt.Errorf("catalog %s: entry %s state %s: %v", source, e.ID, s.Name, err)
			}
			if err := checkMode(s.Mode); err != nil {
				return nil, fmt.Errorf("catalog %s: entry %s state %s: %v", source, e.ID, s.Name, err)
			}
			if s.Versions != nil {
				if err := s.Versions.check(); err != nil {
					return nil, fmt.Errorf("catalog %s: entry %s state %s: %v", source, e.ID, s.Name, err)
				}
			}
		}
		for _, s := range e.Fingerprint.States {
			if err := checkMode(s.Mode); err != nil {
				return nil, fmt.Errorf("catalog %s: entry %s fingerprint %s: %v", source, e.ID, s.Name, err)
			}
		}
		for _, h := range e.Hazards {
			switch h.When {
			case "scale-up", "scale-down", "rescale":
			default:
				return nil, fmt.Errorf("catalog %s: entry %s: hazard when %q (want scale-up, scale-down or rescale)", source, e.ID, h.When)
			}
			if sev, err := ParseSeverity(h.Severity); err != nil || sev == SeverityUnspecified {
				return nil, fmt.Errorf("catalog %s: entry %s: hazard severity %q", source, e.ID, h.Severity)
			}
			if h.Message == "" {
				return nil, fmt.Errorf("catalog %s: entry %s: hazard without message", source, e.ID)
			}
		}
		if e.Assumption != "" && !knownAssumptions[e.Assumption] {
			return nil, fmt.Errorf("catalog %s: entry %s: unknown assumption %q", source, e.ID, e.Assumption)
		}
		if len(e.Fingerprint.States) == 0 && len(e.Fingerprint.UIDs) == 0 && len(e.Fingerprint.UIDSuffixes) == 0 &&
			len(e.Fingerprint.OperatorIDs) == 0 && len(e.Fingerprint.NameContains) == 0 {
			return nil, fmt.Errorf("catalog %s: entry %s: empty fingerprint", source, e.ID)
		}
	}
	for _, b := range c.Bugs {
		if !isFlinkComponent(b.Component) {
			if err := checkComponent(b.Component); err != nil {
				return nil, fmt.Errorf("catalog %s: bug %s: %v", source, b.ID, err)
			}
		}
		for _, r := range b.Affected {
			if err := checkRange(r); err != nil {
				return nil, fmt.Errorf("catalog %s: bug %s: %v", source, b.ID, err)
			}
		}
	}
	return &c, nil
}

func checkMode(m string) error {
	switch m {
	case "", "SPLIT_DISTRIBUTE", "UNION", "BROADCAST":
		return nil
	}
	return fmt.Errorf("unknown mode %q (want SPLIT_DISTRIBUTE, UNION or BROADCAST)", m)
}

func (c *Catalog) index() error {
	c.bugs = map[string]*Bug{}
	for i := range c.Bugs {
		c.bugs[c.Bugs[i].ID] = &c.Bugs[i]
	}
	c.ids = map[checkpoint.OperatorID][]int{}
	c.fpNames = fingerprintNames(c.Entries)
	for i := range c.Entries {
		e := &c.Entries[i]
		for _, s := range e.States {
			if s.Bug != "" && c.bugs[s.Bug] == nil {
				return fmt.Errorf("catalog: entry %s state %s names unknown bug %s", e.ID, s.Name, s.Bug)
			}
		}
		for _, h := range e.Hazards {
			if h.Bug != "" && c.bugs[h.Bug] == nil {
				return fmt.Errorf("catalog: entry %s hazard names unknown bug %s", e.ID, h.Bug)
			}
		}
		for _, h := range e.Fingerprint.OperatorIDs {
			id, err := checkpoint.ParseOperatorID(h)
			if err != nil {
				return fmt.Errorf("catalog: entry %s: %v", e.ID, err)
			}
			c.ids[id] = append(c.ids[id], i)
		}
		for _, u := range e.Fingerprint.UIDs {
			h := uidHash(u)
			c.ids[h] = append(c.ids[h], i)
		}
	}
	return nil
}

// StateRules returns the entry's rules for a state name (a state can carry several labels,
// e.g. ONE-UNGUARDED and FIRST-ONLY).
func (e *CatalogEntry) StateRules(name string) []*StateRule {
	if e == nil {
		return nil
	}
	return pointersWhere(e.States, func(s *StateRule) bool { return s.Name == name })
}

// HasClass reports whether the entry describes the class with the given binary name (dots), by
// its class or one of its aliases.
func (e *CatalogEntry) HasClass(name string) bool {
	if e == nil || name == "" {
		return false
	}
	return e.Class == name || slices.Contains(e.ClassAliases, name)
}

// EntriesForClass returns the entries describing the class with the given binary name (several
// when one class has one entry per configuration, e.g. the partition committer's triggers).
func (c *Catalog) EntriesForClass(name string) []*CatalogEntry {
	if c == nil {
		return nil
	}
	return pointersWhere(c.Entries, func(e *CatalogEntry) bool { return e.HasClass(name) })
}

// firstWhere returns a pointer to the first element of s that match accepts, or nil.
func firstWhere[T any](s []T, match func(*T) bool) *T {
	for i := range s {
		if match(&s[i]) {
			return &s[i]
		}
	}
	return nil
}

// pointersWhere returns pointers to the elements of s that keep accepts, in order (nil if none).
func pointersWhere[T any](s []T, keep func(*T) bool) []*T {
	var out []*T
	for i := range s {
		if keep(&s[i]) {
			out = append(out, &s[i])
		}
	}
	return out
}

// Claims reports whether the entry's implementation registers the state name.
func (e *CatalogEntry) Claims(name string) bool { return len(e.StateRules(name)) > 0 }

// Orphan returns the entry's orphan rule for a state name, or nil.
func (e *CatalogEntry) Orphan(name string) *OrphanRule {
	if e == nil {
		return nil
	}
	return firstWhere(e.Orphans, func(o *OrphanRule) bool { return o.Name == name })
}

// Identify returns the catalog entry that best describes the operator, or nil. Evidence by
// strength: the operator ID equals the hash of a catalog uid or a listed ID; the V5+ uid equals
// a catalog uid or ends with a uid suffix; the V5+ name contains a catalog name fragment. Among
// entries named that way, one whose state fingerprint is present wins (two implementations can
// share a uid, e.g. the partition committer's two triggers), and an entry without a state
// fingerprint (uid_only, or a user's uid-only entry) is taken as named; otherwise,
// an entry matched only by fingerprint from the state names is preferred over the named one if
// it exists, otherwise the named one is kept (its states are then absent: the rules report
// that). Without such evidence the state-name fingerprint decides (all fingerprint states
// present with their modes, optional max parallelism and coordinator state), preferring
// entries that match more states, then user entries, then Priority, then the entry ID.
func Identify(op *checkpoint.OperatorLayout, cat *Catalog) *CatalogEntry {
	if op == nil || cat == nil {
		return nil
	}
	named := cat.named(op.ID, op.UID, op.Name)
	byStates := cat.fingerprintMatches(op)
	for _, e := range named {
		for _, f := range byStates {
			if f == e {
				return e
			}
		}
	}
	for _, e := range named {
		if e.Fingerprint.UIDOnly || len(e.Fingerprint.States) == 0 {
			return e // identified by name or uid only: a state fingerprint cannot contradict it
		}
	}
	if len(byStates) > 0 && (len(named) == 0 || hasOperatorStates(op)) {
		return byStates[0]
	}
	if len(named) > 0 {
		return named[0]
	}
	return nil
}

// identifyNew returns the catalog entry for an operator of the new job that has no state in the
// checkpoint, from its ID (the hash of a catalog uid), or nil.
func identifyNew(id checkpoint.OperatorID, cat *Catalog) *CatalogEntry {
	if cat == nil {
		return nil
	}
	if named := cat.named(id, "", ""); len(named) > 0 {
		return named[0]
	}
	return nil
}

// named returns the entries naming the operator by ID, uid or name, in catalog order.
func (c *Catalog) named(id checkpoint.OperatorID, uid, name string) []*CatalogEntry {
	var out []*CatalogEntry
	add := func(e *CatalogEntry) {
		for _, x := range out {
			if x == e {
				return
			}
		}
		out = append(out, e)
	}
	for _, i := range c.ids[id] {
		add(&c.Entries[i])
	}
	lname := strings.ToLower(name)
	for i := range c.Entries {
		e := &c.Entries[i]
		if uid != "" {
			for _, u := range e.Fingerprint.UIDs {
				if uid == u {
					add(e)
				}
			}
			for _, s := range e.Fingerprint.UIDSuffixes {
				if strings.HasSuffix(uid, s) {
					add(e)
				}
			}
		}
		if name != "" {
			for _, n := range e.Fingerprint.NameContains {
				if strings.Contains(lname, strings.ToLower(n)) {
					add(e)
				}
			}
		}
	}
	return out
}

// fingerprintMatches returns the entries whose state fingerprint the operator carries, best
// first.
func (c *Catalog) fingerprintMatches(op *checkpoint.OperatorLayout) []*CatalogEntry {
	states := c.fingerprintStates(op)
	type cand struct {
		e     *CatalogEntry
		score int
	}
	var cands []cand
	for i := range c.Entries {
		e := &c.Entries[i]
		fp := &e.Fingerprint
		if fp.UIDOnly || len(fp.States) == 0 {
			continue
		}
		if fp.MaxParallelism > 0 && op.MaxParallelism != fp.MaxParallelism {
			continue
		}
		if fp.Coordinator && op.CoordinatorState == nil {
			continue
		}
		ok := true
		for _, s := range fp.States {
			m, found := states[s.Name]
			if !found || (s.Mode != "" && s.Mode != m.String()) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		score := len(fp.States) * 100
		if fp.MaxParallelism > 0 {
			score += 10
		}
		if fp.Coordinator {
			score += 10
		}
		cands = append(cands, cand{e, score})
	}
	sort.SliceStable(cands, func(a, b int) bool {
		ca, cb := cands[a], cands[b]
		if ca.score != cb.score {
			return ca.score > cb.score
		}
		if ca.e.User != cb.e.User {
			return ca.e.User
		}
		if ca.e.Fingerprint.Priority != cb.e.Fingerprint.Priority {
			return ca.e.Fingerprint.Priority > cb.e.Fingerprint.Priority
		}
		return ca.e.ID < cb.e.ID
	})
	out := make([]*CatalogEntry, len(cands))
	for i, c := range cands {
		out[i] = c.e
	}
	return out
}

// fingerprintStates is operatorStates for the names some fingerprint lists: an operator can
// have hundreds of thousands of names, and a map of all of them is tens of bytes a name.
func (c *Catalog) fingerprintStates(op *checkpoint.OperatorLayout) map[string]checkpoint.DistributionMode {
	wanted := c.fpNames
	if wanted == nil {
		wanted = fingerprintNames(c.Entries) // a catalog not indexed (built in place)
	}
	m := map[string]checkpoint.DistributionMode{}
	if len(wanted) == 0 {
		return m
	}
	for i := range op.Subtasks {
		for s := range op.Subtasks[i].OperatorStates() {
			if _, ok := m[s.Name]; !ok && wanted[s.Name] {
				m[s.Name] = s.Mode
			}
		}
	}
	return m
}

// fingerprintNames returns the state names the entries' fingerprints list.
func fingerprintNames(entries []CatalogEntry) map[string]bool {
	names := map[string]bool{}
	for i := range entries {
		for _, s := range entries[i].Fingerprint.States {
			names[s.Name] = true
		}
	}
	return names
}

// hasOperatorStates reports whether some subtask of op has a managed or raw operator state.
func hasOperatorStates(op *checkpoint.OperatorLayout) bool {
	for i := range op.Subtasks {
		for range op.Subtasks[i].OperatorStates() {
			return true
		}
	}
	return false
}
