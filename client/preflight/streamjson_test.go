package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestSubtasksJSONThroughServerSpilled: `check --subtasks -o json --server`, which spills the
// operator pages as they arrive and writes the report at the end (report.WriteJSONSpilled), by
// upload and by URI, writes byte for byte what report.WriteJSON writes of the joined report
// (client.Check): a UNION operator at 768 → 1536 whose rows (2.3 MB) come over several pages,
// continued.
func TestSubtasksJSONThroughServerSpilled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "_metadata")
	testutil.WriteFile(t, path, scenariotest.Synthetic(t, scenarios.SyntheticUnion(768)))
	spills := t.TempDir()
	t.Setenv("TMPDIR", spills)
	addr := startServer(t, dir)
	c := dialClient(t, addr)
	plan, opts := &pb.RescalePlan{DefaultParallelism: 1536}, &pb.CheckOptions{IncludeSubtasks: true}
	for name, target := range map[string]string{"upload": path, "uri": "file://" + path} {
		var joined *pb.RescaleReport
		var err error
		if name == "upload" {
			joined, err = c.CheckFile(context.Background(), path, plan, opts, nil)
		} else {
			joined, err = c.Check(context.Background(), &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: target}}, Plan: plan, Options: opts})
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := proto.Size(joined); n < 1<<20 {
			t.Fatalf("the report is %d bytes: one page", n)
		}
		var want bytes.Buffer
		if err := report.WriteJSON(&want, joined); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, "check", "-o", "json", "--subtasks", "-p", "1536", "--server", addr, "--insecure", target)
		if code != verdictExitCode(joined.GetVerdict()) {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		if out != want.String() {
			t.Errorf("%s: the CLI's JSON (%d bytes) differs from WriteJSON of the joined report (%d bytes)", name, len(out), want.Len())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(spills, "*")); len(left) > 0 {
		t.Errorf("spill files left behind: %v", left)
	}
}

// TestDiscoveredSubtasksJSONSpilled: `check --latest --subtasks -o json --server` spills the
// operator pages as they arrive too, whether the server picks the newest snapshot (a URI) or the
// CLI does and uploads it (a local folder), and writes what report.WriteJSON writes of the
// joined report.
func TestDiscoveredSubtasksJSONSpilled(t *testing.T) {
	root := t.TempDir()
	snap := filepath.Join(root, "chk-5", "_metadata")
	testutil.WriteFile(t, snap, scenariotest.Synthetic(t, scenarios.SyntheticUnion(256)))
	spills := 0
	defer func(f func() (*report.OperatorSpill, error)) { newOperatorSpill = f }(newOperatorSpill)
	newOperatorSpill = func() (*report.OperatorSpill, error) {
		spills++
		return report.NewOperatorSpill()
	}
	addr := startServer(t, root)
	c := dialClient(t, addr)
	plan, opts := &pb.RescalePlan{DefaultParallelism: 512}, &pb.CheckOptions{IncludeSubtasks: true}
	for name, tc := range map[string]struct {
		target string
		joined func() (*pb.RescaleReport, error)
	}{
		"server picks": {"file://" + root, func() (*pb.RescaleReport, error) {
			return c.Check(context.Background(), &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: "file://" + root}, Latest: true}, Plan: plan, Options: opts})
		}},
		"local folder": {root, func() (*pb.RescaleReport, error) { return c.CheckFile(context.Background(), snap, plan, opts, nil) }},
	} {
		joined, err := tc.joined()
		if err != nil {
			t.Fatal(err)
		}
		before := spills
		code, out, stderr := runCLI(t, "check", "-o", "json", "--subtasks", "-p", "512", "--server", addr, "--insecure", "--latest", tc.target)
		if code != verdictExitCode(joined.GetVerdict()) {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		if spills != before+1 {
			t.Errorf("%s: %d spills, want 1", name, spills-before)
		}
		if name == "local folder" {
			// The CLI chose the snapshot and names it, as in-process.
			var rep pb.RescaleReport
			if err := protojson.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			if c := rep.GetCheckpointChoice(); c.GetUri() != filepath.Dir(snap) || c.GetOrigin() != "storage" || c.GetCheckpointId() != 5 {
				t.Errorf("local folder: checkpoint choice %v", c)
			}
			joined.CheckpointChoice = rep.GetCheckpointChoice()
		}
		var want bytes.Buffer
		if err := report.WriteJSON(&want, joined); err != nil {
			t.Fatal(err)
		}
		if got := withoutAge(out); got != withoutAge(want.String()) {
			t.Errorf("%s: the CLI's JSON (%d bytes) differs from WriteJSON of the joined report (%d bytes)", name, len(out), want.Len())
		}
	}
}

// TestDiscoveredJSONSpilledInProcess: in-process, `check --latest` and `check --flink-rest` with
// -o json (with and without --subtasks) spill the operators as they are checked, as a file's
// check does, and write what they write of the whole report when no spill can be made.
func TestDiscoveredJSONSpilledInProcess(t *testing.T) {
	root := t.TempDir()
	snap := filepath.Join(root, "chk-5", "_metadata")
	file, l := scenariotest.SyntheticLayout(t, scenarios.SyntheticUnion(256))
	testutil.WriteFile(t, snap, file)
	op := l.Operators[0]
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", CheckpointPath: "file:" + filepath.Dir(snap),
		Vertices: []flinkresttest.Vertex{{ID: op.ID.String(), Operators: []string{op.Name}, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}}})
	spills, refuse := 0, false
	defer func(f func() (*report.OperatorSpill, error)) { newOperatorSpill = f }(newOperatorSpill)
	newOperatorSpill = func() (*report.OperatorSpill, error) {
		if refuse {
			return nil, errors.New("no temporary folder")
		}
		spills++
		return report.NewOperatorSpill()
	}
	for _, args := range [][]string{
		{"--latest", root},
		{"--latest", root, "--subtasks"},
		{"--flink-rest", fake.URL, "--job", flinkresttest.DefaultJobID, "--subtasks"},
	} {
		args = append([]string{"check", "-o", "json", "-p", "512"}, args...)
		before := spills
		code, out, stderr := runCLI(t, args...)
		if code != exitAllow || spills != before+1 {
			t.Fatalf("%v: exit %d, %d spills (want 1): %s", args, code, spills-before, stderr)
		}
		refuse = true
		code, whole, stderr := runCLI(t, args...)
		refuse = false
		if code != exitAllow {
			t.Fatalf("%v without a spill: exit %d: %s", args, code, stderr)
		}
		if withoutAge(out) != withoutAge(whole) {
			t.Errorf("%v: spilled JSON (%d bytes) differs from the whole report's (%d bytes)", args, len(out), len(whole))
		}
		if strings.Contains(strings.Join(args, " "), "--subtasks") && !strings.Contains(out, `"oldSubtasks"`) {
			t.Errorf("%v: no subtask detail", args)
		}
	}
}

// snapshotAge matches what says a chosen snapshot's age in a report's JSON: the clock at each
// run (an age of 0 ms is not written at all, as protojson leaves out zero values).
var snapshotAge = regexp.MustCompile(`(?m)^ *"ageMs": "[0-9]+",\n|written [0-9]+s ago`)

func withoutAge(json string) string { return snapshotAge.ReplaceAllString(json, "") }
