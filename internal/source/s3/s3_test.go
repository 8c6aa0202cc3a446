package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/source"
	_ "github.com/flinkpreflight/preflight/internal/source/s3"
	"github.com/flinkpreflight/preflight/internal/source/s3test"
)

// The S3 driver against a real S3 server (versitygw on loopback; skipped without it, failing
// under CI=true).

func TestOpenS3(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "ckpts")
	g.CreateBucket(t, "other")
	g.Put(t, "ckpts", "flink/job-1/chk-5/_metadata", bytes.NewReader([]byte("from-s3")))
	g.Put(t, "ckpts", "flink/job-1/chk-6/_metadata", bytes.NewReader(bytes.Repeat([]byte("x"), 100)))
	g.Put(t, "other", "_metadata", bytes.NewReader([]byte("other")))
	entry := strings.Replace(g.BucketURL("ckpts"), "?", "/flink?", 1)
	o, err := source.New(source.Config{Allow: []string{entry}, MaxBytes: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, tc := range []struct {
		name, uri, want string
		kind            source.Kind
	}{
		{"object", "s3://ckpts/flink/job-1/chk-5/_metadata", "from-s3", 0},
		{"folder", "s3://ckpts/flink/job-1/chk-5", "from-s3", 0},
		{"folder slash", "s3://ckpts/flink/job-1/chk-5/", "from-s3", 0},
		{"same options as the entry", strings.Replace(g.BucketURL("ckpts"), "?", "/flink/job-1/chk-5?", 1), "from-s3", 0},
		{"missing", "s3://ckpts/flink/job-1/chk-7", "", source.NotFound},
		{"too large", "s3://ckpts/flink/job-1/chk-6", "", source.TooLarge},
		{"outside the prefix", "s3://ckpts/other/_metadata", "", source.PermissionDenied},
		{"other bucket", "s3://other/_metadata", "", source.PermissionDenied},
		{"endpoint chosen by the caller", "s3://ckpts/flink/job-1/chk-5?endpoint=http%3A%2F%2F169.254.169.254", "", source.PermissionDenied},
		{"dot-dot", "s3://ckpts/flink/../other/_metadata", "", source.PermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := o.Open(context.Background(), tc.uri)
			if tc.kind != 0 {
				var se *source.Error
				if !errors.As(err, &se) || se.Kind != tc.kind {
					t.Fatalf("err = %v, want kind %v", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			body, _ := io.ReadAll(obj)
			if string(body) != tc.want || obj.URI != "s3://ckpts/flink/job-1/chk-5/_metadata" || obj.CacheKey == "" {
				t.Errorf("body %q URI %q key %q", body, obj.URI, obj.CacheKey)
			}
		})
	}
	t.Run("store stopped", func(t *testing.T) {
		g.Stop()
		_, err := o.Open(context.Background(), "s3://ckpts/flink/job-1/chk-5")
		var se *source.Error
		if !errors.As(err, &se) || se.Kind != source.Unavailable || se.RetryAfter <= 0 {
			t.Fatalf("err = %v, want Unavailable with a retry hint", err)
		}
	})
}

func TestLatestS3(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "ckpts")
	g.Put(t, "ckpts", "flink/job-1/chk-5/_metadata", bytes.NewReader([]byte("five")))
	g.Put(t, "ckpts", "flink/job-1/chk-12/_metadata", bytes.NewReader([]byte("twelve")))
	g.Put(t, "ckpts", "flink/job-1/chk-13/opaque-state", bytes.NewReader([]byte("in progress")))
	g.Put(t, "ckpts", "flink/job-1/shared/sst-1", bytes.NewReader([]byte("x")))
	entry := strings.Replace(g.BucketURL("ckpts"), "?", "/flink?", 1)
	o, err := source.New(source.Config{Allow: []string{entry}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	s, note, err := o.Latest(context.Background(), "s3://ckpts/flink/job-1")
	if err != nil {
		t.Fatal(err)
	}
	// Written within the same second, the higher checkpoint ID is the newer one.
	if s.URI != "s3://ckpts/flink/job-1/chk-12" || s.ID != 12 || !strings.Contains(note, "skipped incomplete chk-13") {
		t.Fatalf("%+v %q", s, note)
	}
	obj, err := o.Open(context.Background(), s.URI)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(obj)
	obj.Close()
	if string(body) != "twelve" {
		t.Fatalf("read %q", body)
	}
	if _, _, err := o.Latest(context.Background(), "s3://ckpts/elsewhere"); err == nil {
		t.Fatal("outside the allowlist")
	}
}

// TestStatListIdentityS3: StatFile, ListFolder and Identity, the calls of verify_files, inside
// and outside the allowlist.
func TestStatListIdentityS3(t *testing.T) {
	g := s3test.Start(t)
	g.CreateBucket(t, "ckpts")
	g.Put(t, "ckpts", "flink/sp-1/a", bytes.NewReader(make([]byte, 7)))
	g.Put(t, "ckpts", "flink/sp-1/b", bytes.NewReader(make([]byte, 9)))
	g.Put(t, "ckpts", "flink/sp-1/sub/c", bytes.NewReader(nil))
	g.Put(t, "ckpts", "other/x", bytes.NewReader(nil))
	entry := strings.Replace(g.BucketURL("ckpts"), "?", "/flink?", 1)
	o, err := source.New(source.Config{Allow: []string{entry}})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		uri     string
		size    int64
		outside bool
		kind    source.Kind
	}{
		{"s3://ckpts/flink/sp-1/a", 7, false, 0},
		{"s3://ckpts/flink/sp-1/missing", 0, false, source.NotFound},
		{"s3://ckpts/other/x", 0, true, source.PermissionDenied},
		{"s3://elsewhere/flink/sp-1/a", 0, true, source.PermissionDenied},
		{"hdfs://nn/flink/a", 0, false, source.Invalid},
	} {
		a, err := o.StatFile(ctx, tc.uri)
		var se *source.Error
		switch {
		case tc.kind == 0 && (err != nil || a.Size != tc.size):
			t.Errorf("StatFile(%s) = %+v, %v; want size %d", tc.uri, a, err, tc.size)
		case tc.kind != 0 && (!errors.As(err, &se) || se.Kind != tc.kind || errors.Is(err, source.ErrOutsideAllowlist) != tc.outside):
			t.Errorf("StatFile(%s) err = %v, want %v (outside the allowlist: %v)", tc.uri, err, tc.kind, tc.outside)
		}
	}
	var listed []string
	err = o.ListFolder(ctx, "s3://ckpts/flink/sp-1", func(name string, size int64) bool {
		listed = append(listed, fmt.Sprintf("%s=%d", name, size))
		return true
	})
	if err != nil || strings.Join(listed, ",") != "a=7,b=9" {
		t.Errorf("ListFolder = %v, %v; want a=7,b=9 (objects only, not sub/)", listed, err)
	}
	if err := o.ListFolder(ctx, "s3://ckpts/other", func(string, int64) bool { return true }); !errors.Is(err, source.ErrOutsideAllowlist) {
		t.Errorf("ListFolder outside the allowlist: %v", err)
	}
	if id := o.Identity(ctx, "s3://ckpts/flink/sp-1/a"); !strings.Contains(id, "AWS access key "+s3test.AccessKey) {
		t.Errorf("Identity = %q, want the access key ID", id)
	}
}
