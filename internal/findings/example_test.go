package findings_test

import (
	"fmt"
	"os"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// Check a plan that scales the table sink's compact-operator from 4 to 8.
func ExampleCheck() {
	f, err := os.Open("../../testdata/compact-sink/_metadata")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	layout, err := checkpoint.ReadLayout(f)
	if err != nil {
		panic(err)
	}
	plan := rescale.Plan{Parallelism: map[string]int{"compact-operator": 8}}
	result, err := rescale.Simulate(layout, plan)
	if err != nil {
		panic(err)
	}
	rep := findings.Check(layout, plan, result, findings.DefaultCatalog(), findings.Options{FlinkVersion: "2.0.2"})
	fmt.Println(rep.Verdict)
	for _, f := range rep.Findings {
		fmt.Println(f.RuleID, f.Severity, f.OperatorUID, f.StateName, f.AffectedSubtasks, f.References[0])
	}
	for _, s := range rep.Safe {
		fmt.Printf("%s: requested %d, safe below %d, above %d\n", s.VertexName, s.Requested, s.Below, s.Above)
	}
	// Output:
	// DENY
	// PF101 ERROR compact-operator expired-files [4 5 6 7] FLINK-31689
	// compact-operator: requested 8, safe below 4, above 0
}

// Extend the catalog with an operator of your own.
func ExampleLoadCatalog() {
	cat, err := findings.LoadCatalog("../../testdata/catalog-example.json")
	if err != nil {
		panic(err)
	}
	e := cat.Entry("acme-dedup-operator")
	fmt.Println(e.Name, e.States[0].Assumption)
	// Output:
	// ACME dedup operator (keeps its watermark in `x`) ONE-UNGUARDED
}
