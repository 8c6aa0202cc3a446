package classfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// javac compiles the Java sources into a temporary directory with the javac on PATH (or the
// given one) and returns the directory; it skips the test when there is no javac.
func javac(t testing.TB, bin string, args []string, sources ...string) string {
	t.Helper()
	if bin == "" {
		bin = "javac"
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Skipf("%s not found: the class file tests compile Java sources (CI has a JDK)", bin)
	}
	testutil.DependOn(t, sources...) // javac reads them, not the test binary
	out := t.TempDir()
	cmd := exec.Command(bin, append(append([]string{"-g", "-d", out}, args...), sources...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	return out
}

func readClass(t testing.TB, path string) *Class {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// decodeEveryMethod decodes the code of every method and fails on any error.
func decodeEveryMethod(t testing.TB, c *Class) int {
	t.Helper()
	n := 0
	for _, m := range c.Methods {
		if m.Code == nil {
			continue
		}
		ins, err := DecodeAll(m.Code.Bytes)
		if err != nil {
			t.Fatalf("%s.%s%s: %v", c.Name, m.Name, m.Desc, err)
		}
		n += len(ins)
	}
	return n
}

func TestSample(t *testing.T) {
	for _, tc := range []struct {
		name, javac string
		args        []string
		major       uint16
	}{
		{"release8", "", []string{"--release", "8"}, 52},
		{"default", "", nil, 0},
		{"jdk25", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/javac", nil, 69},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := javac(t, tc.javac, tc.args, "testdata/Sample.java")
			c := readClass(t, filepath.Join(dir, "sample", "Sample.class"))
			if tc.major != 0 && c.Major != tc.major {
				t.Errorf("major %d, want %d", c.Major, tc.major)
			}
			checkSample(t, c)
			inner := readClass(t, filepath.Join(dir, "sample", "Sample$Inner.class"))
			if len(inner.InnerClasses) == 0 || inner.InnerClasses[0].Name != "Inner" {
				t.Errorf("Inner's InnerClasses = %+v", inner.InnerClasses)
			}
			if c.Major >= 55 && inner.NestHost != "sample/Sample" {
				t.Errorf("NestHost %q", inner.NestHost)
			}
		})
	}
}

func checkSample(t *testing.T, c *Class) {
	t.Helper()
	if c.Name != "sample/Sample" || c.Super != "java/lang/Object" || len(c.Interfaces) != 2 || c.Interfaces[0] != "java/lang/Runnable" {
		t.Errorf("header: %q %q %v", c.Name, c.Super, c.Interfaces)
	}
	consts := map[string]Constant{}
	for _, f := range c.Fields {
		if f.ConstantValue != 0 {
			consts[f.Name] = c.Pool[f.ConstantValue]
		}
	}
	if s, _ := c.Pool.String(consts["NAME"].A); consts["NAME"].Tag != TagString || c.Pool[consts["NAME"].A].Str != "pending-commit" {
		t.Errorf("NAME = %+v %q", consts["NAME"], s)
	}
	if consts["BIG"].Int != 1<<40 || consts["PI"].Float != 3.14159 || consts["F"].Float != 1.5 || consts["I"].Int != 123456 {
		t.Errorf("constants %+v", consts)
	}
	if len(c.Bootstrap) == 0 {
		t.Error("no BootstrapMethods")
	}
	if c.SourceFile != "Sample.java" {
		t.Errorf("SourceFile %q", c.SourceFile)
	}
	seen := map[Opcode]bool{}
	for _, m := range c.Methods {
		if m.Code == nil {
			continue
		}
		ins, err := DecodeAll(m.Code.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		for _, in := range ins {
			seen[in.Op] = true
		}
		if len(m.Code.Lines) == 0 {
			t.Errorf("%s has no LineNumberTable", m.Name)
		}
	}
	for _, op := range []Opcode{Tableswitch, Lookupswitch, Invokedynamic, Multianewarray, Newarray, Anewarray, Ldc2W, Athrow} {
		if !seen[op] {
			t.Errorf("no %s decoded", op)
		}
	}
	tc := c.Method("tryCatch", "(Ljava/lang/String;)I")
	if tc == nil || len(tc.Code.Exceptions) < 2 || c.Pool.ClassName(tc.Code.Exceptions[0].CatchType) != "java/lang/NumberFormatException" {
		t.Errorf("tryCatch exception table: %+v", tc)
	}
	sp := c.Method("sparse", "(I)I")
	for _, in := range mustDecode(t, sp.Code.Bytes) {
		if in.Op == Lookupswitch && (len(in.Switch.Keys) != 3 || in.Switch.Keys[0] != -100000) {
			t.Errorf("lookupswitch %+v", in.Switch)
		}
	}
}

func mustDecode(t *testing.T, code []byte) []Instruction {
	t.Helper()
	ins, err := DecodeAll(code)
	if err != nil {
		t.Fatal(err)
	}
	return ins
}

// TestWide compiles a method with more than 256 locals so that javac emits wide loads, stores
// and iinc.
func TestWide(t *testing.T) {
	var src strings.Builder
	src.WriteString("class W { int f() {\n")
	for i := 0; i < 300; i++ {
		src.WriteString("int v" + strconv.Itoa(i) + " = " + strconv.Itoa(i) + ";\n")
	}
	src.WriteString("v299 += 1000; v298++; return v299 + v298; } }\n")
	p := filepath.Join(t.TempDir(), "W.java")
	if err := os.WriteFile(p, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := readClass(t, filepath.Join(javac(t, "", nil, p), "W.class"))
	var wideIinc, wideLoad bool
	for _, in := range mustDecode(t, c.Method("f", "()I").Code.Bytes) {
		if in.Wide && in.Op == Iinc && in.Const == 1000 && in.Index >= 256 {
			wideIinc = true
		}
		if in.Wide && in.Op == Iload {
			wideLoad = true
		}
	}
	if !wideIinc || !wideLoad {
		t.Errorf("wide iinc %v, wide iload %v", wideIinc, wideLoad)
	}
}

// TestJar parses every class of a real jar (Debian's Guava) when it is installed.
func TestJar(t *testing.T) {
	classes := jarClasses(t, "/usr/share/java/guava.jar")
	n := 0
	for name, b := range classes {
		c, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n += decodeEveryMethod(t, c)
	}
	t.Logf("%d classes, %d instructions", len(classes), n)
}

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		major uint16
		ok    bool
	}{{44, false}, {45, true}, {52, true}, {69, true}, {70, false}, {0xFFFF, false}} {
		b := minimalClass(tc.major)
		_, err := Parse(b)
		if (err == nil) != tc.ok {
			t.Errorf("major %d: %v", tc.major, err)
		}
		var fe *FormatError
		if err != nil && (!errors.As(err, &fe) || fe.Off != 6 || fe.Field != "major_version") {
			t.Errorf("major %d: error %#v", tc.major, err)
		}
	}
}
