// Command genexamples writes the example checkpoints of internal/scenarios to testdata/ and, on
// request, the large Kafka orphan-union file (the incident's 168 MB _metadata):
//
//	go run ./internal/scenarios/cmd/genexamples -force           # testdata/<scenario>/_metadata
//	go run ./internal/scenarios/cmd/genexamples -kafka-bytes 176160768 -kafka-out /tmp/big/_metadata
//
// Files that would change are replaced only with -force; every write is atomic.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func main() {
	out := flag.String("out", "testdata", "directory to write <scenario>/_metadata into")
	kafkaBytes := flag.Int64("kafka-bytes", 0, "also write the Kafka orphan-union scenario of about this many bytes")
	kafkaOut := flag.String("kafka-out", "", "where to write the large Kafka file (default <out>/kafka-orphan-union-large/_metadata; not committed)")
	force := flag.Bool("force", false, "replace existing files whose content differs")
	flag.Parse()
	if err := scenarios.WriteAll(*out, *force); err != nil {
		fmt.Fprintln(os.Stderr, "genexamples:", err)
		os.Exit(1)
	}
	for _, s := range scenarios.All() {
		fmt.Fprintf(os.Stderr, "%s: up to date\n", filepath.Join(*out, s.Name, "_metadata"))
	}
	if err := scenarios.WriteSeries(*out, *force); err != nil {
		fmt.Fprintln(os.Stderr, "genexamples:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "%s: up to date\n", filepath.Join(*out, scenarios.SeriesDir))
	if *kafkaBytes <= 0 {
		return
	}
	path := *kafkaOut
	if path == "" {
		path = filepath.Join(*out, "kafka-orphan-union-large", "_metadata")
	}
	err := scenarios.WriteFile(path, *force, func(w io.Writer) error { return scenarios.KafkaOrphanUnion(w, *kafkaBytes) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "genexamples:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", path)
}
