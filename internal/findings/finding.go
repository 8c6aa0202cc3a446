package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/units"
)

// Severity of a finding; the values order by badness and mirror the proto enum.
type Severity int

// Severities.
const (
	SeverityUnspecified Severity = iota
	Info
	Warning
	Error
)

// String returns "INFO", "WARNING" or "ERROR".
func (s Severity) String() string {
	switch s {
	case Info:
		return "INFO"
	case Warning:
		return "WARNING"
	case Error:
		return "ERROR"
	}
	return "UNSPECIFIED"
}

// ParseSeverity accepts "info", "warning", "error" in any case ("" gives SeverityUnspecified).
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "":
		return SeverityUnspecified, nil
	case "INFO":
		return Info, nil
	case "WARNING", "WARN":
		return Warning, nil
	case "ERROR":
		return Error, nil
	}
	return SeverityUnspecified, fmt.Errorf("unknown severity %q (want info, warning or error)", s)
}

// Verdict is the answer for an autoscaler; values mirror the proto enum.
type Verdict int

// Verdicts.
const (
	VerdictUnspecified Verdict = iota
	Allow
	AllowWithWarnings
	Deny
)

// String returns "ALLOW", "ALLOW_WITH_WARNINGS" or "DENY".
func (v Verdict) String() string {
	switch v {
	case Allow:
		return "ALLOW"
	case AllowWithWarnings:
		return "ALLOW_WITH_WARNINGS"
	case Deny:
		return "DENY"
	}
	return "UNSPECIFIED"
}

// Finding is one problem or fact about the planned restore. Its fields mirror the proto
// message preflight.v1.Finding one to one.
type Finding struct {
	RuleID           string
	Title            string
	Severity         Severity
	OperatorID       string // hex
	OperatorName     string // V5+ name, else the catalog's display name
	OperatorUID      string
	VertexID         string   // JobVertexID hex
	StateName        string   // the state concerned; the first of StateNames when there are several
	StateNames       []string // every state covered, in name order, when more than one (see aggregate.go)
	AffectedSubtasks []int32  // new subtask indexes, 0-based
	Message          string
	Remediation      string
	References       []string
	CatalogEntry     string // catalog entry ID that matched, if any
	// Position is the 1-based position in the checkpoint of the operator (else the vertex's
	// head operator); 0 for none. Findings are ordered by it after severity and rule.
	Position int32
	// OperatorIDs is every operator the finding covers, in report order, when it stands for
	// more than MergedOperators operators (OperatorMerger); the other operator fields are the
	// first's.
	OperatorIDs []string
}

// SafeParallelism is the nearest parallelism around the request at which none of the vertex's
// denying rules fire. Below/Above are 0 when no such value exists.
type SafeParallelism struct {
	VertexID   string
	VertexName string
	Requested  int32
	Below      int32
	Above      int32
	Position   int32 // the vertex's position, as Finding.Position; reports list vertices by it
}

// Report is what Check returns.
type Report struct {
	Verdict  Verdict
	Findings []Finding // most severe first, then rule ID, vertex, operator, state: deterministic
	Safe     []SafeParallelism
}

// verdictOf computes the verdict. Documented policy: DENY when any finding is at or above the
// fail level; ALLOW_WITH_WARNINGS when any finding below the fail level is WARNING or ERROR
// (an ERROR below a raised fail level is still worth a warning verdict); ALLOW when only INFO
// findings (or none) remain.
func verdictOf(fs []Finding, failLevel Severity) Verdict {
	if failLevel == SeverityUnspecified {
		failLevel = Error
	}
	v := Allow
	for _, f := range fs {
		if f.Severity >= failLevel {
			return Deny
		}
		if f.Severity >= Warning {
			v = AllowWithWarnings
		}
	}
	return v
}

// subtaskList renders new subtask indexes compactly: "4-7", "0, 2, 5-9".
func subtaskList(idx []int32) string { return units.Ranges(idx) }

// bytesText renders a byte count for messages: "168.0 MiB = 176160768 bytes".
func bytesText(n int64) string { return units.BytesExact(n) }

// Plurals. Every finding text that counts something goes through these (and units.Plural), so
// that no message says "1 operators" or "subtasks 0" when none is affected.

// verbFor picks the verb form agreeing with a count: verbFor(1, "owns", "own") = "owns".
func verbFor(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// subtasksText names new subtasks: "new subtask 3", "new subtasks 4-7", "no new subtask".
func subtasksText(idx []int32) string {
	switch len(idx) {
	case 0:
		return "no new subtask"
	case 1:
		return fmt.Sprintf("new subtask %d", idx[0])
	}
	return "new subtasks " + subtaskList(idx)
}

// subtasksVerb renders "new subtask 3 receives", "new subtasks 4-7 receive" or "no new subtask
// receives" (verb in its plural form: "receive", "keep").
func subtasksVerb(idx []int32, verb string) string {
	if len(idx) <= 1 { // "no new subtask receives", "new subtask 3 receives"
		return subtasksText(idx) + " " + verb + "s"
	}
	return subtasksText(idx) + " " + verb
}

// upperFirst capitalizes the first letter, for a label that starts a sentence.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
