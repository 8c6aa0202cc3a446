package source

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

func TestLatestLocal(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, age time.Duration) {
		p := filepath.Join(root, rel)
		testutil.WriteFile(t, p, []byte("x"))
		ts := time.Now().Add(-age)
		if err := os.Chtimes(p, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	write("job/chk-7/_metadata", 3*time.Minute)
	write("job/chk-9/_metadata", time.Minute)
	write("job/chk-10/state-file", 0) // in progress: no _metadata
	write("job/savepoint-a1b2c3-000000000001/_metadata", 2*time.Minute)
	write("job/shared/x", 0)
	write("job/taskowned/x", 0)
	write("old/savepoint-a1b2c3-000000000002/_metadata", time.Minute)
	write("old/chk-3/_metadata", 30*time.Second)
	write("empty/chk-1/partial", 0)

	o := newOpener(t, Config{Allow: []string{root}})
	tests := []struct {
		dir, want, kind, note string
	}{
		{"job", "chk-9", "checkpoint", "skipped incomplete chk-10"},
		{"old", "chk-3", "checkpoint", "of 2 complete"},
		{"job/chk-7", "chk-7", "checkpoint", ""},
	}
	for _, tt := range tests {
		s, note, err := o.Latest(context.Background(), filepath.Join(root, tt.dir))
		if err != nil {
			t.Fatalf("%s: %v", tt.dir, err)
		}
		if filepath.Base(s.URI) != tt.want || s.Kind != tt.kind || !strings.Contains(note, tt.note) {
			t.Errorf("%s: got %+v %q", tt.dir, s, note)
		}
		obj, err := o.Open(context.Background(), s.URI)
		if err != nil {
			t.Errorf("%s: open %v", s.URI, err)
		} else {
			obj.Close()
		}
	}
	if _, _, err := o.Latest(context.Background(), filepath.Join(root, "empty")); err == nil || !strings.Contains(err.Error(), "incomplete: chk-1") {
		t.Errorf("empty: %v", err)
	}
	if _, _, err := o.Latest(context.Background(), "/"); err == nil || !strings.Contains(err.Error(), "allowlist") {
		t.Errorf("outside: %v", err)
	}
}

func TestAllowURL(t *testing.T) {
	o := newOpener(t, Config{Allow: []string{"http://flink-jm:8081"}})
	for url, ok := range map[string]bool{"http://flink-jm:8081": true, "http://FLINK-JM:8081/": true, "http://other:8081": false, "ftp://flink-jm:8081": false, "http://u:p@flink-jm:8081": false} {
		if err := o.AllowURL(url); (err == nil) != ok {
			t.Errorf("%s: %v", url, err)
		}
	}
}
