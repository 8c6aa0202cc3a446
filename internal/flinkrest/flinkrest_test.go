package flinkrest_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
)

func TestJobAcrossVersions(t *testing.T) {
	wantOps := map[string][]string{
		"45b0254a46cabbc3efeea5d2e170ea5b": {"Source: orders", "streaming-writer"},
		"a004e297ed656c7b8e968e04069ca1a0": {"PartitionCommitter", "Sink: end"},
	}
	for _, v := range flinkresttest.Versions {
		t.Run(v, func(t *testing.T) {
			fake := flinkresttest.Start(t, flinkresttest.Job{Version: v, CheckpointPath: "file:/data/ck/job/chk-1742"})
			c, err := flinkrest.New(fake.URL, flinkrest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			job, err := c.Job(context.Background(), flinkresttest.DefaultJobID)
			if err != nil {
				t.Fatal(err)
			}
			if len(job.Vertices) != 4 || job.State != "RUNNING" {
				t.Fatalf("vertices %d state %s", len(job.Vertices), job.State)
			}
			if job.HasStreamGraph != (v == "2.1") {
				t.Errorf("stream graph %v", job.HasStreamGraph)
			}
			if !strings.HasPrefix(job.FlinkVersion, v) {
				t.Errorf("flink version %q", job.FlinkVersion)
			}
			for id, ops := range wantOps {
				vx, ok := job.Vertex(id)
				if !ok || strings.Join(vx.Operators, "|") != strings.Join(ops, "|") {
					t.Errorf("vertex %s operators %q, want %q", id, vx.Operators, ops)
				}
			}
			vx, _ := job.Vertex("0d9ffb4f280d028d86dadba01ac205d7")
			if vx.Parallelism != 4 || vx.MaxParallelism != 128 {
				t.Errorf("compact-operator %+v", vx)
			}
			r, err := job.Latest()
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != 1742 || r.Savepoint || r.ExternalPath != "file:/data/ck/job/chk-1742" || r.Age != 95*time.Second {
				t.Errorf("latest %+v", r)
			}
			if !strings.Contains(r.Note, "checkpoint 1742") || !strings.Contains(r.Note, "1m35s ago") {
				t.Errorf("note %q", r.Note)
			}
			if job.UnalignedCheckpoints == nil || *job.UnalignedCheckpoints {
				t.Errorf("unaligned %v", job.UnalignedCheckpoints)
			}
			unaligned := flinkresttest.Start(t, flinkresttest.Job{Version: v, Unaligned: true, CheckpointPath: "/ck/chk-1742"})
			c2, _ := flinkrest.New(unaligned.URL, flinkrest.Options{})
			if job, err = c2.Job(context.Background(), flinkresttest.DefaultJobID); err != nil || job.UnalignedCheckpoints == nil || !*job.UnalignedCheckpoints {
				t.Fatalf("unaligned: %v", err)
			}
			if r, _ := job.Latest(); !strings.Contains(r.Note, "unaligned checkpoints are on") {
				t.Errorf("note %q", r.Note)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		job  flinkresttest.Job
		id   string
		kind flinkrest.Kind
		msg  string
	}{
		{"unknown job", flinkresttest.Job{}, "00000000000000000000000000000000", flinkrest.NotFound, "not found"},
		{"malformed job id", flinkresttest.Job{}, "xyz", flinkrest.Invalid, "32 hex"},
		{"no completed checkpoint", flinkresttest.Job{NoCheckpoint: true}, "", flinkrest.FailedPrecondition, "no completed checkpoint"},
		{"checkpointing disabled", flinkresttest.Job{CheckpointingDisabled: true}, "", flinkrest.FailedPrecondition, "checkpointing disabled"},
		{"token refused", flinkresttest.Job{Token: "s3cret"}, "", flinkrest.PermissionDenied, "401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := flinkresttest.Start(t, tt.job)
			c, err := flinkrest.New(fake.URL, flinkrest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			id := tt.id
			if id == "" {
				id = flinkresttest.DefaultJobID
			}
			job, err := c.Job(ctx, id)
			if err == nil {
				_, err = job.Latest()
			}
			if !flinkrest.IsKind(err, tt.kind) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want kind %d containing %q", err, tt.kind, tt.msg)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := flinkrest.New("http://"+addr, flinkrest.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Job(context.Background(), flinkresttest.DefaultJobID)
	if !flinkrest.IsKind(err, flinkrest.Unavailable) {
		t.Fatalf("got %v, want Unavailable", err)
	}
}

func TestToken(t *testing.T) {
	fake := flinkresttest.Start(t, flinkresttest.Job{Token: "s3cret", CheckpointPath: "/x/chk-1"})
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLINK_TOKEN_TEST", "s3cret")
	for _, o := range []flinkrest.Options{{TokenFile: file}, {TokenEnv: "FLINK_TOKEN_TEST"}} {
		c, _ := flinkrest.New(fake.URL, o)
		if _, err := c.Job(context.Background(), flinkresttest.DefaultJobID); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestSavepointIsChosenWhenNewest(t *testing.T) {
	fake := flinkresttest.Start(t, flinkresttest.Job{Savepoint: true, CheckpointPath: "s3a://bucket/sp/savepoint-a1b2c3-0123456789ab"})
	c, _ := flinkrest.New(fake.URL, flinkrest.Options{})
	job, err := c.Job(context.Background(), flinkresttest.DefaultJobID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := job.Latest()
	if err != nil || !r.Savepoint || !strings.HasPrefix(r.Note, "savepoint 1742") {
		t.Fatalf("%+v %v", r, err)
	}
	if u, err := flinkrest.SourceURI(r.ExternalPath); err != nil || u != "s3://bucket/sp/savepoint-a1b2c3-0123456789ab" {
		t.Fatalf("%q %v", u, err)
	}
}

func TestSourceURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"file:/tmp/ck/chk-3", "/tmp/ck/chk-3"},
		{"file:///tmp/ck/chk-3", "/tmp/ck/chk-3"},
		{"s3://b/p/chk-3", "s3://b/p/chk-3"},
		{"s3p://b/p/chk-3", "s3://b/p/chk-3"},
		{"gs://b/p/chk-3", "gs://b/p/chk-3"},
		{"abfss://ckpts@acct.dfs.core.windows.net/job/chk-3", "azblob://ckpts/job/chk-3"},
		{"wasbs://ckpts@acct.blob.core.windows.net/job/chk-3", "azblob://ckpts/job/chk-3"},
		{"/plain/chk-3", "/plain/chk-3"},
		{"hdfs://nn:8020/ck/chk-3", ""},
		{"<checkpoint-not-externally-addressable>", ""},
	}
	for _, tt := range tests {
		got, err := flinkrest.SourceURI(tt.in)
		if tt.want == "" {
			if !flinkrest.IsKind(err, flinkrest.FailedPrecondition) {
				t.Errorf("%s: got %q %v, want FailedPrecondition", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestChainNames(t *testing.T) {
	got := flinkrest.ChainNames("[3]:Source: orders -> Calc(select=[a, b]) -> streaming-writer")
	if strings.Join(got, "|") != "Source: orders|Calc(select=[a, b])|streaming-writer" {
		t.Fatalf("%q", got)
	}
}
