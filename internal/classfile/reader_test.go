package classfile

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/testutil"
)

// jarClasses reads every .class entry of a jar, skipping the test when it is absent.
func jarClasses(t testing.TB, path string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Skipf("%s: %v", path, err)
	}
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".class") || strings.HasPrefix(f.Name, "META-INF/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	return out
}

// builder assembles class files by hand for the error tests.
type builder struct{ b []byte }

func (w *builder) u1(v ...uint8) *builder { w.b = append(w.b, v...); return w }
func (w *builder) u2(v ...uint16) *builder {
	for _, x := range v {
		w.b = binary.BigEndian.AppendUint16(w.b, x)
	}
	return w
}
func (w *builder) u4(v uint32) *builder { w.b = binary.BigEndian.AppendUint32(w.b, v); return w }
func (w *builder) utf8(s string) *builder {
	return w.u1(TagUtf8).u2(uint16(len(s))).u1([]byte(s)...)
}

// classWith builds "class A extends java/lang/Object" with one method m()V whose Code is code
// (no Code attribute when code is nil).
func classWith(major uint16, code []byte) []byte {
	w := &builder{}
	w.u4(Magic).u2(0, major)
	w.u2(8) // pool: 1 A, 2 Class A, 3 Object, 4 Class Object, 5 m, 6 ()V, 7 Code
	w.utf8("A").u1(TagClass).u2(1).utf8("java/lang/Object").u1(TagClass).u2(3).utf8("m").utf8("()V").utf8("Code")
	w.u2(AccPublic|AccSuper, 2, 4, 0) // access, this, super, interfaces
	w.u2(0)                           // fields
	w.u2(1)                           // methods
	if code == nil {
		w.u2(AccAbstract, 5, 6, 0)
	} else {
		w.u2(0, 5, 6, 1, 7).u4(uint32(12+len(code))).u2(4, 4).u4(uint32(len(code))).u1(code...).u2(0, 0)
	}
	w.u2(0) // class attributes
	return w.b
}

func minimalClass(major uint16) []byte { return classWith(major, nil) }

func TestParseErrors(t *testing.T) {
	good := classWith(52, []byte{byte(Return)})
	if _, err := Parse(good); err != nil {
		t.Fatalf("good class: %v", err)
	}
	set := func(off int, v ...byte) []byte {
		b := append([]byte(nil), good...)
		copy(b[off:], v)
		return b
	}
	for _, tc := range []struct {
		name  string
		in    []byte
		off   int64
		field string
	}{
		{"empty", nil, 0, "magic"},
		{"magic", set(0, 0xCA, 0xFE, 0xBA, 0xBF), 0, "magic"},
		{"pool count 0", set(8, 0, 0), 8, "constant_pool_count"},
		{"pool count huge", set(8, 0xFF, 0xFF), 8, "constant_pool_count"},
		{"unknown tag", set(10, 2), 10, "constant_pool[1]"},
		{"class points at class", set(15, 0, 2), 14, "constant_pool[2]"},
		{"this_class not a class", set(58, 0, 1), 58, "this_class"},
		{"truncated", good[:64], 64, "fields_count"},
		{"trailing", append(append([]byte(nil), good...), 0), int64(len(good)), ""},
		{"code length 0", classWith(52, []byte{}), 86, "methods[0].attributes.Code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v, want *FormatError", err)
			}
			if fe.Off != tc.off || fe.Field != tc.field {
				t.Errorf("got off %d field %q (%v), want %d %q", fe.Off, fe.Field, err, tc.off, tc.field)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
		want Instruction
		err  string
	}{
		{"iconst_m1", []byte{2}, Instruction{Op: IconstM1, Len: 1, Const: -1}, ""},
		{"aload_3", []byte{45}, Instruction{Op: 45, Len: 1, Index: 3}, ""},
		{"bipush", []byte{16, 0xFE}, Instruction{Op: Bipush, Len: 2, Const: -2}, ""},
		{"sipush", []byte{17, 0x80, 0}, Instruction{Op: Sipush, Len: 3, Const: -32768}, ""},
		{"goto back", []byte{167, 0xFF, 0xFF}, Instruction{Op: Goto, Len: 3, Target: -1}, ""},
		{"invokeinterface", []byte{185, 0, 9, 2, 0}, Instruction{Op: Invokeinterface, Len: 5, Index: 9, Const: 2}, ""},
		{"wide iinc", []byte{196, 132, 1, 0, 0xFF, 0xFE}, Instruction{Op: Iinc, Wide: true, Len: 6, Index: 256, Const: -2}, ""},
		{"wide astore", []byte{196, 58, 1, 2}, Instruction{Op: Astore, Wide: true, Len: 4, Index: 258}, ""},
		{"wide goto", []byte{196, 167, 0, 0}, Instruction{}, "wide cannot modify"},
		{"invalid", []byte{0xCA}, Instruction{}, "invalid opcode"},
		{"truncated", []byte{17, 1}, Instruction{}, "truncated"},
		{"newarray type", []byte{188, 3}, Instruction{}, "newarray type"},
		{"tableswitch low>high", []byte{170, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, Instruction{}, "low above high"},
		{"tableswitch huge", []byte{170, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF}, Instruction{}, "longer than the code"},
		{"lookupswitch unsorted", []byte{171, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0}, Instruction{}, "not sorted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := Decode(tc.code, 0)
			if testutil.WantError(t, err, tc.err) {
				return
			}
			if in.Op != tc.want.Op || in.Len != tc.want.Len || in.Index != tc.want.Index || in.Const != tc.want.Const || in.Target != tc.want.Target || in.Wide != tc.want.Wide {
				t.Errorf("got %+v, want %+v", in, tc.want)
			}
		})
	}
}

func TestSwitchPadding(t *testing.T) {
	// nop at 0, tableswitch at 1: padding to offset 4, default +3, low 0, high 1, targets.
	code := []byte{0, 170, 0, 0, 0, 0, 0, 23, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 23, 177}
	ins, err := DecodeAll(code)
	if err != nil {
		t.Fatal(err)
	}
	sw := ins[1].Switch
	if len(ins) != 3 || ins[1].Len != 23 || sw.Default != 24 || len(sw.Targets) != 2 || sw.Keys[1] != 1 {
		t.Fatalf("%+v %+v", ins, sw)
	}
	code[7] = 22 // default into the middle of the switch
	if _, err := DecodeAll(code); err == nil || !strings.Contains(err.Error(), "not the start") {
		t.Errorf("bad target: %v", err)
	}
}

// TestOpcodeTable checks the table against the JVM's instruction count: 202 instructions from
// nop (0) to jsr_w (201), nothing above.
func TestOpcodeTable(t *testing.T) {
	for op := 0; op < 256; op++ {
		if got, want := Opcode(op).Valid(), op <= 201; got != want {
			t.Errorf("opcode %d valid %v", op, got)
		}
	}
	if Opcodes[Lload0+2].Name != "lload_2" || Opcodes[Lload0+2].Push != 2 || Opcodes[Astore0+3].Name != "astore_3" || Opcodes[Dconst0+1].Name != "dconst_1" {
		t.Error("implicit rows")
	}
}

func TestDescriptor(t *testing.T) {
	for _, tc := range []struct {
		desc  string
		slots int
		ok    bool
	}{{"()V", 0, true}, {"(IJ[Ljava/lang/String;D)Z", 6, true}, {"(L;)V", 0, false}, {"(I", 0, false}, {"(I)Q", 0, false}} {
		n, ok := ArgSlots(tc.desc)
		if ok != tc.ok || (ok && n != tc.slots) {
			t.Errorf("%s: %d %v", tc.desc, n, ok)
		}
	}
}
