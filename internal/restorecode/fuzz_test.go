package restorecode

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// analyzeFuzzJar analyzes one class file, the only entry (name) of a jar called fuzz.jar.
func analyzeFuzzJar(t *testing.T, name string, class []byte) *Report {
	t.Helper()
	in := Input{Path: "fuzz.jar", Open: func(ctx context.Context, visit func(string, []byte) error) error {
		return visit(name, class)
	}}
	rep, err := Analyze(context.Background(), []Input{in}, Options{MaxSteps: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// FuzzAnalyze: any bytes as a class (seeded with a compiled fixture, which the fuzzer mutates)
// give a report, never a panic; every error names the input and says what is wrong. The seeds
// are committed files: fuzz workers rerun this setup, so it must not run javac.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52})
	if b, err := os.ReadFile("testdata/example/CompactLike.class"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep := analyzeFuzzJar(t, "ops/Fuzz.class", data)
		for _, e := range rep.Errors {
			if e.Jar != "fuzz.jar" || e.Message == "" || e.Offset < 0 || e.Offset > len(data) {
				t.Fatalf("malformed error %+v", e)
			}
		}
		for _, c := range rep.Classes {
			for _, s := range c.States {
				if s.Mode == "" || s.Assumption == "" || (s.Name == "" && s.NameNote == "") {
					t.Fatalf("malformed state %+v", s)
				}
			}
		}
	})
}

// FuzzClassHeader: the closed world's header reader never panics, and where classfile.Parse
// accepts the bytes it reads the same name, super class, interfaces and access flags.
func FuzzClassHeader(f *testing.F) {
	f.Add([]byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52})
	if b, err := os.ReadFile("testdata/example/CompactLike.class"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		name, super, ifaces, access, ok := classHeader(data)
		c, err := classfile.Parse(data)
		if err != nil {
			return
		}
		if !ok || name != c.Name || super != c.Super || access != c.Access || !slices.Equal(ifaces, c.Interfaces) && len(ifaces)+len(c.Interfaces) > 0 {
			t.Fatalf("header %q %q %q %#x %v, parsed %q %q %q %#x", name, super, ifaces, access, ok, c.Name, c.Super, c.Interfaces, c.Access)
		}
	})
}

// TestHostile: huge and deeply nested methods, 800 loops in one method, a 10,000-deep chain of helpers and recursion
// between helpers finish within the step budget and a few seconds. The chain is cut at MaxDepth:
// what lies deeper is UNKNOWN, not NOT-READ.
func TestHostile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name+".java"), []byte(hostileHeader+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Huge", hostileOp("Huge", strings.Repeat("if (it.hasNext()) { n += it.next().length(); }\n", 1500), ""))
	write("Nested", hostileOp("Nested", strings.Repeat("if (it.hasNext()) {\n", 120)+"n += it.next().length();\n"+strings.Repeat("}\n", 120), ""))
	write("Loops", hostileOp("Loops", strings.Repeat("while (it.hasNext()) { n += it.next().length(); }\n", 800), ""))
	var chain strings.Builder
	for i := 0; i < 10000; i++ {
		chain.WriteString("private static String h" + itoa(i) + "(ListState<String> s) throws Exception { return h" + itoa(i+1) + "(s); }\n")
	}
	chain.WriteString("private static String h10000(ListState<String> s) throws Exception { return s.get().iterator().next(); }\n")
	write("Chain", hostileOp("Chain", "h0(s);\n", chain.String()))
	write("Cycle", hostileOp("Cycle", "ping(s, 0);\n",
		"private static String ping(ListState<String> s, int i) throws Exception { return i > 3 ? s.get().iterator().next() : pong(s, i + 1); }\n"+
			"private static String pong(ListState<String> s, int i) throws Exception { return ping(s, i); }\n"))
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	for _, n := range []string{"Huge", "Nested", "Loops", "Chain", "Cycle"} {
		os.Rename(filepath.Join(dir, n+".java"), filepath.Join(src, n+".java"))
	}
	if err := os.CopyFS(filepath.Join(src, "stubs"), os.DirFS("testdata/own/stubs")); err != nil {
		t.Fatal(err)
	}
	classes := compileJava(t, src, "-J-Xss16m")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := Analyze(ctx, []Input{{Path: classes}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("analysis took %v", d)
	}
	want := map[string]string{"Huge": FirstOnly, "Nested": FirstOnly, "Loops": MergeAll, "Chain": Unknown, "Cycle": OneUnguarded}
	for cls, label := range want {
		_, st := findState(rep, "hostile."+cls, "s")
		if st == nil || st.Assumption != label {
			t.Errorf("%s: %+v, want %s", cls, st, label)
		}
	}
	for _, e := range rep.Errors {
		t.Logf("error: %v", e)
	}
	t.Logf("took %v", time.Since(start))
}

const hostileHeader = `package hostile;
import java.util.Iterator;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
`

func hostileOp(name, body, extra string) string {
	return "public class " + name + ` {
    public void initializeState(FunctionInitializationContext context) throws Exception {
        ListState<String> s = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("s", String.class));
        Iterator<String> it = s.get().iterator();
        int n = 0;
` + body + `
    }
` + extra + "}\n"
}

func itoa(i int) string { return strconv.Itoa(i) }

// FuzzInterpret: random bytecode in place of CompactLike.initializeState's code (the class stays
// well formed, so the interpreter, not the reader, meets the bytes) gives a report and errors
// that name the class and method, never a panic.
func FuzzInterpret(f *testing.F) {
	class, err := os.ReadFile("testdata/example/CompactLike.class")
	if err != nil {
		f.Fatal(err)
	}
	c, err := classfile.Parse(class)
	if err != nil {
		f.Fatal(err)
	}
	code := c.Method("initializeState", "(Lorg/apache/flink/runtime/state/StateInitializationContext;)V").Code
	f.Add(append([]byte(nil), code.Bytes...))
	f.Add([]byte{byte(classfile.Goto), 0, 0})
	f.Add([]byte{byte(classfile.Aload0), byte(classfile.Aload0), byte(classfile.Ifeq), 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := append([]byte(nil), class...)
		copy(b[code.Off:code.Off+int64(len(code.Bytes))], data)
		rep := analyzeFuzzJar(t, "ops/CompactLike.class", b)
		for _, e := range rep.Errors {
			if e.Class != "ops.CompactLike" || e.Method == "" || e.Offset < 0 || e.Offset > len(code.Bytes) {
				t.Fatalf("malformed error %+v", e)
			}
		}
	})
}
