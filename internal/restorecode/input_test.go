package restorecode

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeJar(t *testing.T, entries map[string][]byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.jar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, b := range entries {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestInputs(t *testing.T) {
	class, err := os.ReadFile("testdata/example/CompactLike.class")
	if err != nil {
		t.Fatal(err)
	}
	broken := append([]byte(nil), class[:200]...)
	jar := writeJar(t, map[string][]byte{
		"ops/CompactLike.class": class, "ops/Broken.class": broken, "META-INF/versions/11/ops/X.class": {1},
		"README.txt": []byte("not a class"),
	})
	jarBytes, err := os.ReadFile(jar)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		in       Input
		opts     Options
		classes  int
		errMatch string // substring of one error message, "" for none
	}{
		{"jar", Input{Path: jar}, Options{}, 1, "constant_pool_count"},
		{"jar entries limit", Input{Path: jar}, Options{MaxEntries: 2}, 0, "exceeds the limit of 2"},
		{"jar in memory", Input{Path: "s3://builds/job.jar", Jar: bytes.NewReader(jarBytes), Size: int64(len(jarBytes))}, Options{}, 1, "constant_pool_count"},
		{"not a jar in memory", Input{Path: "s3://builds/job.jar", Jar: bytes.NewReader(class), Size: int64(len(class))}, Options{}, 0, "not a valid zip"},
		{"class size limit", Input{Path: jar}, Options{MaxClassBytes: 1000}, 0, "exceeds the limit of 1000"},
		{"class file", Input{Path: "testdata/example/CompactLike.class"}, Options{}, 1, ""},
		{"missing", Input{Path: "testdata/nonexistent.jar"}, Options{}, 0, "no such file"},
		{"open", Input{Path: "mem", Open: func(ctx context.Context, visit func(string, []byte) error) error {
			return visit("ops/CompactLike.class", class)
		}}, Options{}, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Analyze(context.Background(), []Input{tc.in}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Classes) != tc.classes {
				t.Errorf("%d classes: %+v", len(rep.Classes), rep.Classes)
			}
			for _, c := range rep.Classes {
				if c.Jar != tc.in.Path {
					t.Errorf("jar %q, want %q", c.Jar, tc.in.Path)
				}
			}
			found := tc.errMatch == ""
			for _, e := range rep.Errors {
				found = found || strings.Contains(e.Message, tc.errMatch)
				if e.Jar != tc.in.Path {
					t.Errorf("error names %q: %+v", e.Jar, e)
				}
			}
			if !found || (tc.errMatch == "" && len(rep.Errors) > 0) {
				t.Errorf("errors %+v, want one with %q", rep.Errors, tc.errMatch)
			}
		})
	}
}

func TestBrokenClassError(t *testing.T) {
	class, _ := os.ReadFile("testdata/example/CompactLike.class")
	jar := writeJar(t, map[string][]byte{"ops/Broken.class": class[:300]})
	rep, err := Analyze(context.Background(), []Input{{Path: jar}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Class != "ops/Broken.class" || rep.Errors[0].Offset < 200 || rep.Errors[0].Offset > 300 || !strings.Contains(rep.Errors[0].Message, "truncated") {
		t.Errorf("%+v", rep.Errors)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Analyze(ctx, []Input{{Path: "testdata/example/CompactLike.class"}}, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v", err)
	}
}

// TestStepBudget: a class whose analysis needs more steps than allowed reports an Error naming
// the class and method, and keeps what it found.
func TestStepBudget(t *testing.T) {
	rep, err := Analyze(context.Background(), []Input{{Path: "testdata/example/CompactLike.class"}}, Options{MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || rep.Errors[0].Class != "ops.CompactLike" || !strings.HasPrefix(rep.Errors[0].Method, "initializeState") {
		t.Errorf("%+v", rep.Errors)
	}
}
