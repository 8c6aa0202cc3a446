package restorecode_test

import (
	"context"
	"fmt"

	"github.com/flinkpreflight/preflight/internal/restorecode"
)

// testdata/example/CompactLike.class is testdata/own/ops/CompactLike.java compiled by javac.
func Example() {
	rep, err := restorecode.Analyze(context.Background(),
		[]restorecode.Input{{Path: "testdata/example/CompactLike.class"}}, restorecode.Options{})
	if err != nil {
		fmt.Println(err) // only when the context ends
		return
	}
	for _, c := range rep.Classes {
		for _, s := range c.States {
			e := s.Evidence[0]
			fmt.Printf("%s %q %s %s restoredOnly=%v at %s line %d\n", c.Class, s.Name, s.Mode, s.Assumption, s.RestoredOnly, e.Method, e.Line)
		}
	}
	// Output:
	// ops.CompactLike "expired-files" SPLIT_DISTRIBUTE ONE-UNGUARDED restoredOnly=true at initializeState line 25
}
