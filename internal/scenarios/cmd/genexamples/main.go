// Command genexamples writes the example checkpoints of internal/scenarios to testdata/ and, on
// request, the large Kafka orphan-union file (the incident's 168 MB _metadata):
//
//	go run ./internal/scenarios/cmd/genexamples -force           # testdata/<scenario>/_metadata and the fuzz seeds
//	go run ./internal/scenarios/cmd/genexamples -kafka-bytes 176160768 -kafka-out /tmp/big/_metadata
//	go run ./internal/scenarios/cmd/genexamples -synthetic operators=100000,split=1 -synthetic-out /tmp/ops/_metadata
//	go run ./internal/scenarios/cmd/genexamples -synthetic parallelism=4096,split=1,union=1 -synthetic-out /tmp/union/_metadata
//	go run ./internal/scenarios/cmd/genexamples -synthetic operators=10000,split=1 -synthetic-out /tmp/sp-1/_metadata -synthetic-files
//
// Files that would change are replaced only with -force; every write is atomic.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func main() {
	out := flag.String("out", "testdata", "directory to write <scenario>/_metadata into")
	root := flag.String("root", ".", "repository root, under which the fuzz seeds go (<package>/testdata/fuzz/<target>/)")
	kafkaBytes := flag.Int64("kafka-bytes", 0, "also write the Kafka orphan-union scenario of about this many bytes")
	kafkaOut := flag.String("kafka-out", "", "where to write the large Kafka file (default <out>/kafka-orphan-union-large/_metadata; not committed)")
	force := flag.Bool("force", false, "replace existing files whose content differs")
	synthetic := flag.String("synthetic", "", "also write a synthetic scale checkpoint: operators=N,parallelism=P,maxparallelism=M,split=S,union=U,broadcast=B,elements=E,elementsize=Z (see scenarios.Synthetic)")
	syntheticOut := flag.String("synthetic-out", "", "where to write the synthetic checkpoint (required with -synthetic)")
	syntheticFiles := flag.Bool("synthetic-files", false, "also write every state file the synthetic checkpoint references beside it, of its recorded size (a savepoint folder for verify_files)")
	flag.Parse()
	if *synthetic != "" {
		if err := writeSynthetic(*synthetic, *syntheticOut, *force, *syntheticFiles); err != nil {
			fmt.Fprintln(os.Stderr, "genexamples:", err)
			os.Exit(2)
		}
		if *kafkaBytes <= 0 {
			return
		}
	}
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
	if err := scenarios.WriteFuzzSeeds(*root, *force); err != nil {
		fmt.Fprintln(os.Stderr, "genexamples:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "fuzz seeds: up to date")
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

// writeSynthetic parses the -synthetic spec and writes the file.
func writeSynthetic(spec, path string, force, files bool) error {
	if path == "" {
		return fmt.Errorf("-synthetic needs -synthetic-out")
	}
	s := scenarios.Synthetic{Operators: 1, Parallelism: 1}
	fields := map[string]*int{"operators": &s.Operators, "parallelism": &s.Parallelism, "maxparallelism": &s.MaxParallelism,
		"split": &s.Split, "union": &s.Union, "broadcast": &s.Broadcast, "elements": &s.Elements, "elementsize": &s.ElementSize}
	for _, kv := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		dst := fields[strings.ToLower(k)]
		n, err := strconv.Atoi(v)
		if !ok || dst == nil || err != nil || n < 0 {
			return fmt.Errorf("-synthetic %q: want key=non-negative integer with keys operators, parallelism, maxparallelism, split, union, broadcast, elements, elementsize", kv)
		}
		*dst = n
	}
	if files {
		names, err := scenarios.WriteSyntheticFolder(filepath.Dir(path), s)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "wrote %s and %d state files beside it\n", path, len(names))
		return nil
	}
	if err := scenarios.WriteFile(path, force, func(w io.Writer) error { return scenarios.WriteSynthetic(w, s) }); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", path)
	return nil
}
