package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
	"github.com/flinkpreflight/preflight/server"
)

// startServer runs a real server on a loopback port for the CLI's --server mode.
func startServer(t *testing.T, allow ...string) string {
	_, addr := startGRPCServer(t, allow...)
	return addr
}

// dialClient connects to the server at addr without TLS, closed when the test ends.
func dialClient(t *testing.T, addr string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), addr, client.Options{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startGRPCServer is startServer that also returns the server (for its HTTP handler).
func startGRPCServer(t *testing.T, allow ...string) (*server.Server, string) {
	t.Helper()
	srv, err := server.New(server.Config{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	return srv, testutil.ServeLoopback(t, srv.ServeGRPC, srv.Close)
}

// TestEmbeddedAndRemoteAgree runs the same checks in-process, by upload to a server and by URI on
// the server: the reports must be identical.
func TestEmbeddedAndRemoteAgree(t *testing.T) {
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	// A catalog written by preflight analyze --catalog-out, which the server reads from its
	// allowlist (check --catalog --server sends its URI).
	scratch := t.TempDir()
	catalog := filepath.Join(scratch, "job-catalog.json")
	if code, _, stderr := runCLI(t, "analyze", "../../testdata/custom-operator/job.jar", "--catalog-out", catalog); code != exitAllow {
		t.Fatalf("analyze --catalog-out: exit %d: %s", code, stderr)
	}
	addr := startServer(t, testdata, scratch)
	tests := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"compact sink scaled up", []string{"../../testdata/compact-sink/_metadata", "--set", "compact-operator=8"}, exitDeny},
		{"compact sink scaled down", []string{"../../testdata/compact-sink", "--set", "compact-operator=2"}, exitAllow},
		{"compact sink unchanged", []string{"../../testdata/compact-sink", "--set", "compact-operator=4"}, exitAllow},
		{"max parallelism", []string{"../../testdata/max-parallelism/_metadata", "-p", "200"}, exitDeny},
		{"kafka orphan union", []string{"../../testdata/kafka-orphan-union", "-p", "4", "--flink-version", "1.19.1"}, -1},
		// The job jar is analyzed by the server (job_jar_uris) as in-process: PF101, DENY.
		{"custom operator with job jar", []string{"../../testdata/custom-operator/_metadata", "--set", "pending-commit-writer=8", "--job-jar", "../../testdata/custom-operator/job.jar"}, exitDeny},
		{"custom operator with analyzed catalog", []string{"../../testdata/custom-operator/_metadata", "--set", "pending-commit-writer=8", "--catalog", catalog}, exitDeny},
		{"custom operator without job jar", []string{"../../testdata/custom-operator/_metadata", "--set", "pending-commit-writer=8"}, exitAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			embeddedCode, embedded, stderr := runCLI(t, append([]string{"check", "-o", "json"}, tt.args...)...)
			if tt.wantCode >= 0 && embeddedCode != tt.wantCode {
				t.Fatalf("embedded exit code %d, want %d; stderr %s", embeddedCode, tt.wantCode, stderr)
			}
			remoteCode, remote, stderr := runCLI(t, append([]string{"check", "-o", "json", "--server", addr, "--insecure"}, tt.args...)...)
			if remoteCode != embeddedCode {
				t.Fatalf("remote exit code %d, embedded %d; stderr %s", remoteCode, embeddedCode, stderr)
			}
			// The same checkpoint read by the server from its allowlist, by URI.
			abs, err := filepath.Abs(tt.args[0])
			if err != nil {
				t.Fatal(err)
			}
			byURI := append([]string{"check", "-o", "json", "--server", addr, "--insecure", "file://" + abs}, tt.args[1:]...)
			uriCode, uri, stderr := runCLI(t, byURI...)
			if uriCode != embeddedCode {
				t.Fatalf("remote-by-URI exit code %d, embedded %d; stderr %s", uriCode, embeddedCode, stderr)
			}
			want := parseReport(t, embedded)
			for mode, out := range map[string]string{"upload": remote, "uri": uri} {
				got := parseReport(t, out)
				// The source label differs by design (a path in-process, the upload's name or URI remotely).
				w := proto.Clone(want).(*pb.RescaleReport)
				w.Checkpoint.Source, got.Checkpoint.Source = "", ""
				if !proto.Equal(w, got) {
					t.Errorf("%s report differs from embedded:\nembedded %v\nremote   %v", mode, w, got)
				}
			}
		})
	}
}

func parseReport(t *testing.T, s string) *pb.RescaleReport {
	t.Helper()
	var r pb.RescaleReport
	if err := protojson.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not a RescaleReport: %v\n%s", err, s)
	}
	return &r
}

// decide --job-jar answers the same in-process and through a server that analyzes the jar
// itself (job_jar_uris): VETO with PF101.
func TestDecideJobJarEmbeddedAndRemoteAgree(t *testing.T) {
	dir, err := filepath.Abs("../../testdata/custom-operator")
	if err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, dir)
	args := []string{"decide", "--set", "pending-commit-writer=8", "--job-jar", "../../testdata/custom-operator/job.jar", "-o", "json"}
	embeddedCode, embedded, stderr := runCLI(t, append(args, dir)...)
	remoteCode, remote, stderr2 := runCLI(t, append(args, "file://"+dir, "--server", addr, "--insecure")...)
	// The server labels the checkpoint with the URI it opened; the CLI with the path it was given.
	remote = strings.ReplaceAll(remote, "file://"+dir+"/_metadata", dir)
	if embeddedCode != exitDeny || !strings.Contains(embedded, "DECISION_ACTION_VETO") || !strings.Contains(embedded, "PF101") {
		t.Fatalf("embedded: exit %d\n%s\n%s", embeddedCode, embedded, stderr)
	}
	if embeddedCode != remoteCode || embedded != remote {
		t.Fatalf("embedded %d, remote %d\n%s\n%s\n%s", embeddedCode, remoteCode, embedded, remote, stderr2)
	}
}

// Where the job jar's analysis and a catalog entry for the same class disagree, stderr says so
// in-process and with --server alike (the server sends it in a response header).
func TestJobJarDisagreementOnStderr(t *testing.T) {
	if server.CatalogDisagreementHeader != client.CatalogDisagreementHeader {
		t.Fatalf("the server sends %q, the client reads %q", server.CatalogDisagreementHeader, client.CatalogDisagreementHeader)
	}
	scratch := t.TempDir()
	catalog := filepath.Join(scratch, "hand.json")
	if code, _, stderr := runCLI(t, "analyze", "../../testdata/custom-operator/job.jar", "--catalog-out", catalog); code != exitAllow {
		t.Fatalf("analyze --catalog-out: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(catalog)
	if err != nil {
		t.Fatal(err)
	}
	// The same entry as a hand-written one that says MERGE-ALL.
	hand := strings.Replace(strings.Replace(string(b), `"analysis:`, `"hand:`, 1), `"ONE-UNGUARDED"`, `"MERGE-ALL"`, 1)
	if err := os.WriteFile(catalog, []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, testdata, scratch)
	args := []string{"check", "../../testdata/custom-operator", "--set", "pending-commit-writer=8", "--job-jar", "../../testdata/custom-operator/job.jar", "--catalog", catalog, "-o", "json"}
	const want = `labels state "pending-commit" ONE-UNGUARDED, the catalog entry "hand:`
	for name, args := range map[string][]string{"in-process": args, "server": append(args, "--server", addr, "--insecure")} {
		code, _, stderr := runCLI(t, args...)
		if code != exitDeny || !strings.Contains(stderr, "preflight: ") || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want DENY and %q", name, code, stderr, want)
		}
	}
}
