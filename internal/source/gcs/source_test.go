package gcs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/source"
	"github.com/flinkpreflight/preflight/internal/source/gcs"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// End to end: package source opens gs:// URIs through the registered driver against
// fake-gcs-server, and the engine decodes and checks the real checkpoint it reads.

// older dates an object an hour back, so that it is not the latest snapshot.
func older(o fakestorage.Object) fakestorage.Object {
	o.Updated = time.Now().Add(-time.Hour)
	o.Created = o.Updated
	return o
}

func TestSourceOpensGS(t *testing.T) {
	compact, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "compact-sink", "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	fake := gcs.StartFake(t,
		gcs.Obj("ckpts", "flink/job-1/chk-1742/_metadata", compact),
		gcs.Obj("ckpts", "flink/job-1/chk-1743/opaque-state", []byte("in progress")),
		gcs.Obj("ckpts", "flink/job-1/shared/sst-1", []byte("x")),
		older(gcs.Obj("ckpts", "flink/job-1/chk-1741/_metadata", bytes.Repeat([]byte("x"), 100))),
		gcs.Obj("ckpts", "other/_metadata", []byte("outside the prefix")),
	)
	t.Setenv(gcs.EmulatorHostEnv, "")
	if !slices.Contains(source.Schemes(), gcs.Scheme) {
		t.Fatalf("schemes %v: gs not registered", source.Schemes())
	}
	query := url.Values{"endpoint": {fake.URL()}, "anonymous": {"true"}}.Encode()
	o, err := source.New(source.Config{Allow: []string{"gs://ckpts/flink?" + query}, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx := context.Background()
	const file = "gs://ckpts/flink/job-1/chk-1742/_metadata"

	for _, tc := range []struct {
		name, uri string
		kind      source.Kind
		msg       string
	}{
		{"file", file, 0, ""},
		{"folder", "gs://ckpts/flink/job-1/chk-1742", 0, ""},
		{"folder with slash", "gs://ckpts/flink/job-1/chk-1742/", 0, ""},
		{"same options as the entry", "gs://ckpts/flink/job-1/chk-1742?" + query, 0, ""},
		{"missing", "gs://ckpts/flink/job-1/chk-9", source.NotFound, "gs://ckpts/flink/job-1/chk-9/_metadata"},
		{"outside the prefix", "gs://ckpts/other/_metadata", source.PermissionDenied, "outside the allowlist"},
		{"endpoint chosen by the caller", "gs://ckpts/flink/job-1/chk-1742?endpoint=http%3A%2F%2F169.254.169.254", source.PermissionDenied, "query options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := o.Open(ctx, tc.uri)
			if tc.kind != 0 {
				var se *source.Error
				if !errors.As(err, &se) || se.Kind != tc.kind || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("err = %v, want kind %v naming %q", err, tc.kind, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			if obj.URI != file || obj.Size != int64(len(compact)) || obj.CacheKey == "" {
				t.Fatalf("URI %q size %d cache key %q", obj.URI, obj.Size, obj.CacheKey)
			}
			rep, err := engine.New().Check(ctx, engine.Request{Input: engine.Input{Reader: obj, Source: obj.URI},
				Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.GetVerdict() != pb.Verdict_VERDICT_DENY || len(rep.GetFindings()) == 0 || rep.GetFindings()[0].GetRuleId() != "PF101" {
				t.Errorf("verdict %v findings %v, want DENY with PF101 (testdata/README.md)", rep.GetVerdict(), rep.GetFindings())
			}
		})
	}

	t.Run("inspect", func(t *testing.T) {
		obj, err := o.Open(ctx, file)
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Close()
		resp, err := engine.New().Inspect(ctx, engine.Input{Reader: obj, Source: obj.URI})
		if err != nil {
			t.Fatal(err)
		}
		if c := resp.GetCheckpoint(); c.GetCheckpointId() != 1742 || c.GetOperatorCount() != 6 || c.GetFormatVersion() != 5 {
			t.Errorf("checkpoint %v, want format 5, id 1742, 6 operators", c)
		}
	})

	t.Run("latest", func(t *testing.T) {
		s, note, err := o.Latest(ctx, "gs://ckpts/flink/job-1")
		if err != nil {
			t.Fatal(err)
		}
		if s.URI != "gs://ckpts/flink/job-1/chk-1742" || s.ID != 1742 || !strings.Contains(note, "skipped incomplete chk-1743") {
			t.Fatalf("%+v %q", s, note)
		}
	})

	// Opened (Stat), then rewritten before the first Read: the read fails rather than yield other
	// bytes under the cache key of the version Stat saw, also when the size did not change. The
	// next Open reads the new version under a new key.
	for _, content := range []string{"a shorter one", "same size, 13"} {
		t.Run("replaced while being opened: "+content, func(t *testing.T) {
			obj, err := o.Open(ctx, "gs://ckpts/flink/job-1/chk-1741")
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			fake.CreateObject(gcs.Obj("ckpts", "flink/job-1/chk-1741/_metadata", []byte(content)))
			_, err = io.ReadAll(obj)
			var se *source.Error
			if !errors.As(err, &se) || se.Kind != source.Unavailable || !strings.Contains(err.Error(), "changed") {
				t.Fatalf("err = %v, want Unavailable: object changed", err)
			}
			again, err := o.Open(ctx, "gs://ckpts/flink/job-1/chk-1741")
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			body, err := io.ReadAll(again)
			if err != nil || string(body) != content || again.CacheKey == obj.CacheKey {
				t.Fatalf("read %q, %v; cache keys %q and %q", body, err, obj.CacheKey, again.CacheKey)
			}
		})
	}

	t.Run("store stopped", func(t *testing.T) {
		fake.Stop()
		_, err := o.Open(ctx, file)
		var se *source.Error
		if !errors.As(err, &se) || se.Kind != source.Unavailable || se.RetryAfter <= 0 || !strings.Contains(err.Error(), "gs://ckpts/") {
			t.Fatalf("err = %v, want Unavailable with a retry hint", err)
		}
	})
}
