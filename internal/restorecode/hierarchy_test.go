package restorecode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// TestListCheckpointedCycles: hostile class files whose superclasses (A extends B extends A) and
// superinterfaces (I extends J extends I) form cycles, which javac cannot write: the class
// files are patched after compiling. Whether A's restoreState(List) is a restore root is still
// decided, quickly: only when the inputs hold D, a ListCheckpointed subclass inheriting it.
func TestListCheckpointedCycles(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"cyc/A.java": "package cyc;\npublic class A extends B implements I {\n" +
			"    protected long offset;\n" +
			"    public void restoreState(java.util.List<Long> state) { offset = state.get(0); }\n}\n",
		"cyc/B.java": "package cyc;\npublic class B extends C {}\n",
		"cyc/C.java": "package cyc;\npublic class C {}\n",
		"cyc/I.java": "package cyc;\npublic interface I extends J {}\n",
		"cyc/J.java": "package cyc;\npublic interface J extends K {}\n",
		"cyc/K.java": "package cyc;\npublic interface K {}\n",
		"cyc/D.java": "package cyc;\npublic class D extends A implements org.apache.flink.streaming.api.checkpoint.ListCheckpointed<Long> {\n" +
			"    public java.util.List<Long> snapshotState(long id, long ts) { return null; }\n}\n",
		"org/apache/flink/streaming/api/checkpoint/ListCheckpointed.java": "package org.apache.flink.streaming.api.checkpoint;\n" +
			"public interface ListCheckpointed<T extends java.io.Serializable> {\n" +
			"    java.util.List<T> snapshotState(long checkpointId, long timestamp) throws Exception;\n" +
			"    void restoreState(java.util.List<T> state) throws Exception;\n}\n",
	}
	for name, text := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	classes := compileJava(t, src)
	cyclic := map[string][]byte{}
	for _, n := range []string{"A", "B", "D", "I", "J"} {
		b, err := os.ReadFile(filepath.Join(classes, "cyc", n+".class"))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("cyc/C"), []byte("cyc/A")) // B extends A
		b = bytes.ReplaceAll(b, []byte("cyc/K"), []byte("cyc/I")) // J extends I
		cyclic["cyc/"+n+".class"] = b
	}
	for n, super := range map[string]string{"B": "cyc/A", "J": "cyc/I"} {
		if _, s, ifaces, _, ok := classHeader(cyclic["cyc/"+n+".class"]); !ok || s != super && (len(ifaces) != 1 || ifaces[0] != super) {
			t.Fatalf("patched cyc/%s: super %q, interfaces %q, want %s", n, s, ifaces, super)
		}
	}
	for _, tc := range []struct {
		name    string
		without string // a class left out of the inputs
		want    string // A's "_default_" assumption, "" for not reported
	}{
		{"inherited by D", "", OneUnguarded},
		{"no ListCheckpointed", "cyc/D.class", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Path: "cyc.jar", Open: func(ctx context.Context, visit func(string, []byte) error) error {
				for _, n := range []string{"cyc/A.class", "cyc/B.class", "cyc/D.class", "cyc/I.class", "cyc/J.class"} {
					if n == tc.without {
						continue
					}
					if err := visit(n, cyclic[n]); err != nil {
						return err
					}
				}
				return nil
			}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			rep, err := Analyze(ctx, []Input{in}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("analysis took %v", d)
			}
			got := ""
			if _, st := findState(rep, "cyc.A", listCheckpointedState); st != nil {
				got = st.Assumption
			}
			if got != tc.want || len(rep.Classes) != min(len(tc.want), 1) {
				t.Errorf("cyc.A %q: %q, want %q (report %+v)", listCheckpointedState, got, tc.want, rep.Classes)
			}
		})
	}
}

// TestListCheckpointedWalkBounds: whether Flink calls a class's restoreState(List) depends on
// walks of its supertypes (a chain of superinterfaces reaching ListCheckpointed) and of its
// subclasses (one that is a ListCheckpointed inheriting the method). Past their bounds
// (maxSupertypes, maxListSubclasses) the analysis reports that it did not decide, naming the
// class, instead of silently answering "not restored"; within them the state is found as usual.
func TestListCheckpointedWalkBounds(t *testing.T) {
	const lcType = "org.apache.flink.streaming.api.checkpoint.ListCheckpointed<Long>"
	cases := []struct {
		pkg          string
		supers, subs int  // A implements I0 … I(supers-1), ending in ListCheckpointed; subs subclasses of A
		lcSub        bool // the last subclass is a ListCheckpointed
		want         bool
	}{
		{"sup8", 8, 0, false, true},
		{"sup72", maxSupertypes + 8, 0, false, false},
		{"sub8", 0, 8, true, true},
		{"sub264", 0, maxListSubclasses + 8, false, false},
	}
	src := t.TempDir()
	testutil.WriteFile(t, filepath.Join(src, "org/apache/flink/streaming/api/checkpoint/ListCheckpointed.java"), []byte(
		"package org.apache.flink.streaming.api.checkpoint;\n"+
			"public interface ListCheckpointed<T extends java.io.Serializable> {\n"+
			"    java.util.List<T> snapshotState(long checkpointId, long timestamp) throws Exception;\n"+
			"    void restoreState(java.util.List<T> state) throws Exception;\n}\n"))
	write := func(pkg, name, decl string) {
		testutil.WriteFile(t, filepath.Join(src, pkg, name+".java"), []byte("package "+pkg+";\npublic "+decl+"\n"))
	}
	for _, tc := range cases {
		impl := ""
		if tc.supers > 0 {
			impl = " implements I0"
		}
		write(tc.pkg, "A", "class A"+impl+" {\n    protected long offset;\n"+
			"    public java.util.List<Long> snapshotState(long id, long ts) { return null; }\n"+
			"    public void restoreState(java.util.List<Long> state) { offset = state.get(0); }\n}")
		for i := range tc.supers {
			up := fmt.Sprintf("I%d", i+1)
			if i == tc.supers-1 {
				up = lcType
			}
			write(tc.pkg, fmt.Sprintf("I%d", i), fmt.Sprintf("interface I%d extends %s {}", i, up))
		}
		for i := range tc.subs {
			impl := ""
			if tc.lcSub && i == tc.subs-1 {
				impl = " implements " + lcType
			}
			write(tc.pkg, fmt.Sprintf("S%d", i), fmt.Sprintf("class S%d extends A%s {}", i, impl))
		}
	}
	// One analysis of the compiled folder: the bounds are per analysed class.
	rep, err := Analyze(context.Background(), []Input{{Path: compileJava(t, src)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		_, st := findState(rep, tc.pkg+".A", listCheckpointedState)
		undecided := false
		for _, e := range rep.Errors {
			undecided = undecided || e.Class == tc.pkg+".A" && strings.Contains(e.Message, "not decided")
		}
		if (st != nil) != tc.want || undecided == tc.want {
			t.Errorf("%s: state found %v, undecided reported %v (errors %+v)", tc.pkg, st != nil, undecided, rep.Errors)
		}
	}
}
