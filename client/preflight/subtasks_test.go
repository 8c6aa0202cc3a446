package main

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/client"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestSubtasksJSONEqualsDaemon: `check --subtasks -o json` carries the same per-subtask detail,
// under the same field names, as the daemon's CheckRescale with include_subtasks, for every
// example checkpoint in testdata at its stored parallelism, scaled down, and scaled up.
func TestSubtasksJSONEqualsDaemon(t *testing.T) {
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(testdata, "*", "_metadata"))
	if len(files) == 0 {
		t.Skip("example checkpoints not generated")
	}
	addr := startServer(t, testdata)
	c, err := client.Dial(context.Background(), addr, client.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, file := range files {
		for _, p := range []int{0, 1, 3, 8} {
			name := filepath.Base(filepath.Dir(file)) + "/p=" + strconv.Itoa(p)
			t.Run(name, func(t *testing.T) {
				code, out, stderr := runCLI(t, "check", "-o", "json", "--subtasks", "-p", strconv.Itoa(p), file)
				if code != exitAllow && code != exitDeny {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				cli := parseReport(t, out)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				daemon, err := c.Check(ctx, &pb.CheckRescaleRequest{
					Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: "file://" + file}},
					Plan:       &pb.RescalePlan{DefaultParallelism: int32(p)},
					Options:    &pb.CheckOptions{IncludeSubtasks: true, FailLevel: pb.Severity_SEVERITY_ERROR},
				})
				if err != nil {
					t.Fatal(err)
				}
				var subtasks int
				if len(cli.GetOperators()) != len(daemon.GetOperators()) {
					t.Fatalf("CLI %d operators, daemon %d", len(cli.GetOperators()), len(daemon.GetOperators()))
				}
				for k, op := range cli.GetOperators() {
					d := daemon.GetOperators()[k]
					if len(op.GetSubtasks()) != len(d.GetSubtasks()) {
						t.Fatalf("%s: CLI %d subtasks, daemon %d", op.GetOperatorId(), len(op.GetSubtasks()), len(d.GetSubtasks()))
					}
					for i, st := range op.GetSubtasks() {
						if !proto.Equal(st, d.GetSubtasks()[i]) {
							t.Errorf("%s subtask %d:\nCLI    %v\ndaemon %v", op.GetOperatorId(), i, st, d.GetSubtasks()[i])
						}
						subtasks++
					}
				}
				if subtasks == 0 {
					t.Fatal("no per-subtask detail in the CLI's JSON")
				}
				// Without --subtasks the JSON stays as it was: no per-subtask detail.
				_, out, _ = runCLI(t, "check", "-o", "json", "-p", strconv.Itoa(p), file)
				for _, op := range parseReport(t, out).GetOperators() {
					if len(op.GetSubtasks()) != 0 {
						t.Fatalf("%s: subtasks without --subtasks", op.GetOperatorId())
					}
				}
			})
		}
	}
}
