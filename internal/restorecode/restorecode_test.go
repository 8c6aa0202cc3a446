package restorecode

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// compileJava compiles every .java file under src with javac into a temporary directory, or
// skips the test when there is no javac (CI has a JDK).
func compileJava(t testing.TB, src string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not found: the restore-code tests compile their Java fixtures (CI has a JDK)")
	}
	var files []string
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			files = append(files, p)
		}
		return nil
	})
	out := t.TempDir()
	cmd := exec.Command("javac", append(append([]string{"-g", "-nowarn", "-d", out}, args...), files...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	return out
}

// expectation is one row of an expected-labels TSV: class, state, mode, assumption, method and
// line of the decisive instruction ("-" when not checked).
type expectation struct {
	class, state, mode, assumption, method, line string
}

func readExpectations(t testing.TB, path string) []expectation {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expectation
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		cols := strings.Split(sc.Text(), "\t")
		if n == 0 || len(cols) == 0 || strings.HasPrefix(cols[0], "#") || sc.Text() == "" {
			continue
		}
		if len(cols) < 6 {
			t.Fatalf("%s:%d: %d columns, want 6 (more are notes)", path, n+1, len(cols))
		}
		out = append(out, expectation{cols[0], cols[1], cols[2], cols[3], cols[4], cols[5]})
	}
	return out
}

func findState(rep *Report, class, name string) (*ClassReport, *State) {
	for i := range rep.Classes {
		c := &rep.Classes[i]
		if c.Class != class {
			continue
		}
		for j := range c.States {
			if c.States[j].Name == name {
				return c, &c.States[j]
			}
		}
	}
	return nil, nil
}

// checkExpectations compares a report with an expected-labels file.
func checkExpectations(t *testing.T, rep *Report, want []expectation) {
	t.Helper()
	for _, w := range want {
		_, st := findState(rep, w.class, w.state)
		if st == nil {
			t.Errorf("%s %q: not reported", w.class, w.state)
			continue
		}
		if st.Mode != w.mode || st.Assumption != w.assumption {
			t.Errorf("%s %q: %s %s, want %s %s (evidence %+v)", w.class, w.state, st.Mode, st.Assumption, w.mode, w.assumption, st.Evidence)
			continue
		}
		if w.method == "-" {
			continue
		}
		if w.assumption == NotRead {
			// Nothing reads the state: the place to name is where it is registered.
			if st.Registered == nil || st.Registered.Method != w.method {
				t.Errorf("%s %q: registered at %+v, want %s", w.class, w.state, st.Registered, w.method)
			}
			continue
		}
		found := false
		for _, e := range st.Evidence {
			found = found || (e.Method == w.method && (w.line == "-" || strconv.Itoa(e.Line) == w.line))
		}
		if !found {
			t.Errorf("%s %q: evidence %+v, want %s line %s", w.class, w.state, st.Evidence, w.method, w.line)
		}
	}
}

// checkOffsets verifies every evidence offset: an instruction starts there and the
// LineNumberTable gives the reported line.
func checkOffsets(t *testing.T, dir string, rep *Report) {
	t.Helper()
	for _, c := range rep.Classes {
		for _, s := range c.States {
			for _, e := range s.Evidence {
				cls := c.Class
				if e.Class != "" {
					cls = e.Class
				}
				in := instructionAt(t, dir, cls, e.Method, e.Offset)
				if in == nil {
					t.Errorf("%s.%s: no instruction at offset %d (state %q)", cls, e.Method, e.Offset, s.Name)
				}
			}
		}
	}
}

// instructionAt decodes the instruction at off in the first method of that name whose line
// table covers it.
func instructionAt(t *testing.T, dir, class, method string, off int) *classfile.Instruction {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(class, ".", "/")+".class"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := classfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Methods {
		if m.Name != method || m.Code == nil {
			continue
		}
		ins, err := classfile.DecodeAll(m.Code.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ins {
			if ins[i].Off == off {
				return &ins[i]
			}
		}
	}
	return nil
}

var compiled = map[string]string{} // javac arguments -> output directory, shared by the tests

// analyzeOwn compiles testdata/own (once per javac arguments) and analyses it.
func analyzeOwn(t *testing.T, args ...string) (string, *Report) {
	t.Helper()
	key := strings.Join(args, " ")
	dir, ok := compiled[key]
	if !ok {
		dir = compileJava(t, "testdata/own", args...)
		if tmp, err := os.MkdirTemp("", "restorecode-own"); err == nil {
			if err := os.CopyFS(tmp, os.DirFS(dir)); err == nil {
				dir, compiled[key] = tmp, tmp
			}
		}
	}
	rep, err := Analyze(context.Background(), []Input{{Path: dir}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Errors {
		t.Errorf("analysis error: %v", e)
	}
	return dir, rep
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range compiled {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// TestOwnFixtures checks the labels of testdata/own against expected.tsv, compiled for Java 8
// (string concatenation through StringBuilder) and for the default release (invokedynamic).
func TestOwnFixtures(t *testing.T) {
	for _, args := range [][]string{{"--release", "8"}, nil} {
		t.Run(strings.Join(append([]string{"javac"}, args...), " "), func(t *testing.T) {
			dir, rep := analyzeOwn(t, args...)
			checkExpectations(t, rep, readExpectations(t, "testdata/own/expected.tsv"))
			checkOffsets(t, dir, rep)
			if t.Failed() {
				b, _ := json.MarshalIndent(rep, "", "  ")
				t.Logf("report:\n%s", b)
			}
		})
	}
}

func TestKeyedStateIgnored(t *testing.T) {
	_, rep := analyzeOwn(t)
	for _, c := range rep.Classes {
		if c.Class == "ops.KeyedOnly" {
			t.Errorf("keyed state reported as operator state: %+v", c)
		}
	}
}

// TestCompactLikeEvidence pins the key case: the decisive instruction is Iterator.next() under
// isRestored().
func TestCompactLikeEvidence(t *testing.T) {
	dir, rep := analyzeOwn(t)
	c, st := findState(rep, "ops.CompactLike", "expired-files")
	if st == nil {
		t.Fatal("expired-files not reported")
	}
	if !st.RestoredOnly || c.Jar != dir || len(st.Evidence) != 1 {
		t.Fatalf("%+v", st)
	}
	in := instructionAt(t, dir, "ops.CompactLike", "initializeState", st.Evidence[0].Offset)
	b, _ := os.ReadFile(filepath.Join(dir, "ops/CompactLike.class"))
	cls, _ := classfile.Parse(b)
	ref, _ := cls.Pool.Member(in.Index)
	if in.Op != classfile.Invokeinterface || ref.Class != "java/util/Iterator" || ref.Name != "next" {
		t.Errorf("decisive instruction %s %+v", in.Op, ref)
	}
	if _, u := findState(rep, "ops.Unrestored", "unrestored"); u == nil || u.RestoredOnly {
		t.Errorf("unrestored: %+v", u)
	}
	if _, s := findState(rep, "ops.CommitterLike", "pending-partitions"); s == nil || !s.RestoredOnly || s.Evidence[0].Class != "ops.TriggerLike" {
		t.Errorf("CommitterLike: %+v", s)
	}
	// Helpers returns early when !isRestored(): every later read is restoredOnly.
	for _, name := range []string{"only-element", "copy-get0", "stream-first", "via-helper", "kotlin-first", "size-checked"} {
		if _, s := findState(rep, "ops.Helpers", name); s == nil || !s.RestoredOnly {
			t.Errorf("%s: %+v", name, s)
		}
	}
}

func TestNames(t *testing.T) {
	_, rep := analyzeOwn(t)
	for _, c := range rep.Classes {
		if c.Class != "ops.Names" {
			continue
		}
		var names, notes []string
		for _, s := range c.States {
			names = append(names, s.Name)
			notes = append(notes, s.NameNote)
		}
		if len(names) != 3 || names[0] != "ctor-state" || names[1] != "concat-3" || names[2] != NameNotConstant ||
			!strings.Contains(notes[2], "not constant: ops.Names.initializeState offset") {
			t.Errorf("names %q notes %q", names, notes)
		}
		return
	}
	t.Error("ops.Names not reported")
}

// TestJSON pins the output shape of `preflight analyze -o json`.
func TestJSON(t *testing.T) {
	rep := &Report{Classes: []ClassReport{{Class: "org.example.MyOperator", Jar: "job.jar", States: []State{{
		Name: "pending-commit", Mode: SplitDistribute, Assumption: OneUnguarded, RestoredOnly: true,
		Evidence: []Evidence{{Method: "initializeState", Line: 87, Offset: 112}},
	}}}}, Errors: []Error{}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"classes":[{"class":"org.example.MyOperator","jar":"job.jar","states":[{"name":"pending-commit","mode":"SPLIT_DISTRIBUTE","assumption":"ONE-UNGUARDED","restoredOnly":true,"evidence":[{"method":"initializeState","line":87,"offset":112}]}]}],"errors":[]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestEnumBodyMissing: when a constant's body that the enum lists is not among the classes, the
// call on the enum is an escape (UNKNOWN), not the label of the bodies that are there.
func TestEnumBodyMissing(t *testing.T) {
	dir, _ := analyzeOwn(t)
	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tmp, "ops", "PickMode$2.class")); err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(context.Background(), []Input{{Path: tmp}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, st := findState(rep, "ops.EnumDispatch", "enum-first"); st == nil || st.Assumption != Unknown {
		t.Errorf("enum-first without PickMode$2: %+v, want UNKNOWN", st)
	}
	if _, st := findState(rep, "ops.EnumDispatch", "enum-all"); st == nil || st.Assumption != MergeAll {
		t.Errorf("enum-all: %+v, want MERGE-ALL (its bodies are all there)", st)
	}
}
