package restorecode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/findings"
)

// TestCatalog: the analysis becomes catalog entries that the catalog loader accepts, with the
// evidence in the consequence, and disagreements with a hand entry of the same class are named.
func TestCatalog(t *testing.T) {
	rep := &Report{Classes: []ClassReport{
		{Class: "org.example.Op", Jar: "job.jar", States: []State{
			{Name: "pending", Mode: SplitDistribute, Assumption: OneUnguarded, Evidence: []Evidence{{Method: "initializeState", Line: 37, Offset: 69}}},
			{Name: NameNotConstant, NameNote: "not constant: a parameter", Mode: Union, Assumption: MergeAll},
			{Name: "odd", Mode: SplitDistribute, Assumption: Unknown},
		}},
		{Class: "org.example.NoNames", Jar: "job.jar", States: []State{{Mode: Union, Assumption: MergeAll}}},
	}}
	cat := rep.Catalog()
	if len(cat.Entries) != 1 {
		t.Fatalf("%d entries, want 1 (a class without named states has nothing to be recognised by)", len(cat.Entries))
	}
	e := cat.Entries[0]
	if e.ID != "analysis:org.example.Op" || len(e.States) != 2 || len(e.Fingerprint.States) != 2 {
		t.Fatalf("entry %+v", e)
	}
	if c := e.States[0].Consequence; !strings.Contains(c, "Op.initializeState, line 37, bytecode offset 69") {
		t.Errorf("consequence %q lacks the evidence", c)
	}
	if !e.States[1].InfoWhenEmpty {
		t.Error("UNKNOWN should report empty subtasks as for an unknown operator")
	}
	b, err := json.Marshal(cat)
	if err != nil {
		t.Fatal(err)
	}
	loaded := findings.DefaultCatalog()
	if err := loaded.MergeJSON(b, "analysis"); err != nil {
		t.Fatalf("the catalog loader refuses the analysis' entries: %v", err)
	}
	hand := &findings.Catalog{Entries: []findings.CatalogEntry{{ID: "hand-op", Class: "org.example.Op",
		States: []findings.StateRule{{Name: "pending", Assumption: findings.FirstOnly}, {Name: "odd", Assumption: findings.MergeAll}}}}}
	d := Disagreements(hand, cat)
	if len(d) != 2 || !strings.Contains(d[0], `state "pending" ONE-UNGUARDED, the catalog entry "hand-op" says FIRST-ONLY`) {
		t.Errorf("disagreements %q", d)
	}
}
