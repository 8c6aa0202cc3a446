// Command gen writes the OpenAPI document preflightd serves (server/openapi.json) from the
// generated one and the hand-written fragment; `make generate` runs it after buf generate.
//
//	go run ./internal/openapidoc/gen GENERATED.json FRAGMENT.json OUT.json
package main

import (
	"fmt"
	"os"

	"github.com/flinkpreflight/preflight/internal/atomicfile"
	"github.com/flinkpreflight/preflight/internal/openapidoc"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gen GENERATED.json FRAGMENT.json OUT.json")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "openapidoc:", err)
		os.Exit(1)
	}
}

func run(generated, fragment, out string) error {
	g, err := os.ReadFile(generated)
	if err != nil {
		return err
	}
	f, err := os.ReadFile(fragment)
	if err != nil {
		return err
	}
	doc, err := openapidoc.Build(g, f)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(out, doc)
}
