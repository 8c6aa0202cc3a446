package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/flinkpreflight/preflight/internal/units"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// Limits bound how much of a check report text and Markdown show, so that a report stays a
// screen or two on any checkpoint; what is left out is counted and named ("… and 99,980 more
// operators"). JSON always carries everything.
type Limits struct {
	Findings  int // findings shown, most severe first
	Operators int // rows of the operators table, in report order
}

// DefaultLimits are what WriteCheck, WriteText, WriteTextTable and WriteMarkdown show.
var DefaultLimits = Limits{Findings: 10, Operators: 20}

// NoLimits shows everything (the CLI's --full).
var NoLimits = Limits{Findings: math.MaxInt, Operators: math.MaxInt}

// leftOutFindings says which findings past the first shown a report leaves out, by severity:
// "… and 29 more findings (2 WARNING, 27 INFO): --full shows them, -o json lists them all".
func leftOutFindings(fs []*pb.Finding, shown int) string {
	rest := fs[shown:]
	var counts []string
	for i := 0; i < len(rest); {
		j := i
		for j < len(rest) && rest[j].GetSeverity() == rest[i].GetSeverity() {
			j++
		}
		counts = append(counts, units.Thousands(int64(j-i))+" "+SeverityName(rest[i].GetSeverity()))
		i = j
	}
	return fmt.Sprintf("… and %s (%s): --full shows them, -o json lists them all", more(len(rest), "finding"), strings.Join(counts, ", "))
}

// leftOutOperators says how many operator rows a report leaves out.
func leftOutOperators(n int) string {
	return fmt.Sprintf("… and %s: --full shows them, -o json lists them all", more(n, "operator"))
}

// more counts what is left out: "1 more finding", "99,980 more operators".
func more(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return units.Thousands(int64(n)) + " more " + noun
}

// statesWhere names a finding's states for the line under its title: "state x", or for a
// finding over several states "300,000 states (-o json lists them all)".
func statesWhere(f *pb.Finding) string {
	if n := len(f.GetStateNames()); n > 1 {
		return units.Thousands(int64(n)) + " states (-o json lists them all)"
	}
	if f.GetStateName() != "" {
		return "state " + f.GetStateName()
	}
	return ""
}

// operatorsWhere names the operators of a finding over several (operator_ids) from the first's
// label: "operators #1 op-0 (8620…) and 99,999 more (-o json lists them all)".
func operatorsWhere(first string, n int) string {
	return "operators " + strings.TrimPrefix(first, "operator ") + " and " + units.Thousands(int64(n-1)) + " more (-o json lists them all)"
}

// statesCellOf is a finding's State cell in Markdown: the state, or the first and a count.
func statesCellOf(f *pb.Finding) string {
	if n := len(f.GetStateNames()); n > 1 {
		return f.GetStateNames()[0] + " and " + units.Thousands(int64(n-1)) + " more"
	}
	return f.GetStateName()
}
