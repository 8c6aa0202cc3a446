package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestSubtasksJSONEqualsDaemon: `check --subtasks -o json` carries the same per-subtask detail,
// under the same field names, as the daemon's CheckRescale with include_subtasks (over gRPC, and
// as JSON from its HTTP API), for every example checkpoint in testdata at its stored
// parallelism, scaled down, and scaled up.
func TestSubtasksJSONEqualsDaemon(t *testing.T) {
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(testdata, "*", "_metadata"))
	if len(files) == 0 {
		t.Skip("example checkpoints not generated")
	}
	srv, addr := startGRPCServer(t, testdata)
	web := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(web.Close)
	c := dialClient(t, addr)
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
				// The daemon's HTTP JSON names the fields as the CLI does (it also prints zeros).
				body := `{"checkpoint":{"uri":"file://` + file + `"},"plan":{"defaultParallelism":` + strconv.Itoa(p) + `},"options":{"includeSubtasks":true}}`
				resp, err := http.Post(web.URL+"/v1/check", "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("POST /v1/check: %s", resp.Status)
				}
				type reportJSON struct {
					Operators []struct {
						Subtasks []map[string]any `json:"subtasks"`
					} `json:"operators"`
				}
				var httpResp struct {
					Report reportJSON `json:"report"`
				}
				var cliJSON reportJSON
				if err := json.NewDecoder(resp.Body).Decode(&httpResp); err != nil {
					t.Fatal(err)
				}
				httpJSON := httpResp.Report
				if err := json.Unmarshal([]byte(out), &cliJSON); err != nil {
					t.Fatal(err)
				}
				if len(httpJSON.Operators) != len(cliJSON.Operators) {
					t.Fatalf("HTTP %d operators, CLI %d", len(httpJSON.Operators), len(cliJSON.Operators))
				}
				for k, op := range cliJSON.Operators {
					for i, st := range op.Subtasks {
						h := httpJSON.Operators[k].Subtasks[i]
						for field, v := range st {
							if !reflect.DeepEqual(dropZeros(h[field]), v) {
								t.Errorf("operator %d subtask %d field %q: CLI %v, HTTP %v", k, i, field, v, h[field])
							}
						}
					}
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

// dropZeros removes zero-valued fields inside nested objects: the HTTP gateway emits them, the
// CLI's JSON omits them (per-state shares of a subtask with nothing are {"name","mode"} there).
func dropZeros(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropZeros(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch e {
			case 0.0, "0", "", false, nil:
				continue
			}
			out[k] = dropZeros(e)
		}
		return out
	}
	return v
}
