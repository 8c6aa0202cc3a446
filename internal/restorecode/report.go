package restorecode

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/findings"
)

// Distribution modes of operator state, as Flink's OperatorStateHandle.Mode names them.
const (
	SplitDistribute = "SPLIT_DISTRIBUTE" // getListState: elements split among the new subtasks
	Union           = "UNION"            // getUnionListState: every subtask receives all elements
	Broadcast       = "BROADCAST"        // getBroadcastState: every subtask receives the same map
)

// Restore-assumption labels: the catalog's vocabulary, named once in internal/findings, which
// the catalog entries the analysis writes (Report.Catalog) must match.
const (
	OneUnguarded   = findings.OneUnguarded   // takes an element without checking that one exists
	ExactlyOne     = findings.ExactlyOne     // requires exactly one element (getOnlyElement, size()==1)
	AtMostOne      = findings.AtMostOne      // tolerates none, throws on more than one
	FirstOnly      = findings.FirstOnly      // reads the first element behind a check, ignores the rest
	MergeAll       = findings.MergeAll       // reads every element and keeps or combines them all
	UnionFilter    = findings.UnionFilter    // union state: reads all, keeps those this subtask owns
	OrderDependent = findings.OrderDependent // depends on element positions (last wins, index access)
	NotRead        = findings.NotRead        // registered, never read on the restore path
	Unknown        = findings.Unknown        // the restored elements escape the analysis
)

// NameNotConstant is the name reported for a state whose name the analysis cannot
// constant-propagate (a constructor's argument, a call's result): it says so rather than guess.
const NameNotConstant = "?"

// Report is the result of Analyze; it serializes to the JSON of `preflight analyze -o json`.
type Report struct {
	Classes []ClassReport `json:"classes"`
	Errors  []Error       `json:"errors"`
}

// ClassReport lists the operator states that one class's restore code registers.
type ClassReport struct {
	Class  string  `json:"class"` // binary name, org.example.MyOperator
	Jar    string  `json:"jar"`   // the input's path as given
	States []State `json:"states"`
}

// State is one registered operator state and what the restore code assumes about its elements.
type State struct {
	// Name is the state name; NameNotConstant ("?") when it is not a constant, NameNote then says
	// "not constant" and where the descriptor was built.
	Name       string `json:"name"`
	NameNote   string `json:"nameNote,omitempty"`
	Mode       string `json:"mode"`
	Assumption string `json:"assumption"`
	// RestoredOnly: every decisive read happens under context.isRestored().
	RestoredOnly bool       `json:"restoredOnly"`
	Evidence     []Evidence `json:"evidence"`
	// Registered is where the state is registered (always set by Analyze).
	Registered *Evidence `json:"registered,omitempty"`
}

// Evidence is one decisive instruction: the method holding it, its source line (0 when the class
// has no LineNumberTable) and bytecode offset. Class is set when the method belongs to another
// class than the one reported (a superclass or a helper).
type Evidence struct {
	Class  string `json:"class,omitempty"`
	Method string `json:"method"`
	Line   int    `json:"line"`
	Offset int    `json:"offset"`
}

// Error is an input the analysis could not read, or a method it could not finish.
type Error struct {
	Jar     string `json:"jar"`
	Class   string `json:"class,omitempty"`
	Method  string `json:"method,omitempty"`
	Offset  int    `json:"offset"`
	Message string `json:"message"`
}

func (e Error) Error() string {
	s := e.Jar
	if e.Class != "" {
		s += ": " + e.Class
	}
	if e.Method != "" {
		s += "." + e.Method
	}
	return fmt.Sprintf("%s at byte %d: %s", s, e.Offset, e.Message)
}
