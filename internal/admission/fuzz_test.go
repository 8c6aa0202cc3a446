package admission

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReview feeds resources (seeded from every fixture) through Parse and Plan: no panic, every
// error an *Error naming a field, and a plan either skips or names where to read.
func FuzzReview(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		if err != nil {
			checkError(t, err)
			return
		}
		c, err := Plan(r, DefaultRESTTemplate)
		if err != nil {
			checkError(t, err)
			return
		}
		if c.Skip == "" && c.Target.JobID == "" && c.Target.Savepoint == "" {
			t.Fatalf("no skip and no target: %+v", c)
		}
		if c.Skip == "" {
			c.Proposal([]Vertex{{vSource, 4}, {vCompact, 4}, {vCoord, 1}})
			a := Review(context.Background(), b, Config{}, &fakeBackend{})
			if a.Message == "" || !a.Checked {
				t.Fatalf("%+v", a)
			}
		}
	})
}

func checkError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Field == "" || !strings.HasPrefix(err.Error(), "admission: ") {
		t.Fatalf("error %T %v: want an *Error naming a field", err, err)
	}
}
