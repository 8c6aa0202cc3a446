package classfile

import (
	"errors"
	"testing"
)

// checkFormatError fails unless err is a *FormatError pointing inside an input of n bytes.
func checkFormatError(t *testing.T, err error, n int) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %T %v is not a *FormatError", err, err)
	}
	if fe.Off < 0 || fe.Off > int64(n) {
		t.Fatalf("error offset %d outside the %d-byte input: %v", fe.Off, n, err)
	}
}

func fuzzSeeds(f *testing.F) {
	f.Add(minimalClass(52))
	f.Add(classWith(65, []byte{byte(Iload0), byte(Ifeq), 0, 5, 0, byte(Return)}))
	n := 0
	for _, b := range jarClasses(skipless{f}, "/usr/share/java/commons-cli.jar") {
		if n++; n > 20 {
			break
		}
		f.Add(b)
	}
}

// skipless lets jarClasses run under a fuzz target without skipping it when the jar is absent.
type skipless struct{ *testing.F }

func (s skipless) Skipf(string, ...any) {}

// FuzzParse: any bytes give a Class or a *FormatError inside the input, never a panic; every
// method of a parsed class decodes or gives a *FormatError inside its code.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			checkFormatError(t, err, len(data))
			return
		}
		for _, m := range c.Methods {
			if m.Code == nil {
				continue
			}
			if _, err := DecodeAll(m.Code.Bytes); err != nil {
				checkFormatError(t, err, len(m.Code.Bytes))
			}
			_ = m.Code.Line(0)
		}
		for i := range c.Bootstrap {
			_, _, _ = c.BootstrapMethod(uint16(i))
		}
	})
}

// FuzzDecode: any bytes as a code array decode into instructions that tile it, or an error.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 170, 0, 0, 0, 0, 0, 23, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 23, 177})
	f.Add([]byte{196, 132, 1, 0, 0xFF, 0xFE, 177})
	f.Add([]byte{171, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 12, 177})
	f.Fuzz(func(t *testing.T, code []byte) {
		ins, err := DecodeAll(code)
		if err != nil {
			checkFormatError(t, err, len(code))
			return
		}
		off := 0
		for _, in := range ins {
			if in.Off != off || in.Len <= 0 {
				t.Fatalf("instruction %+v at %d", in, off)
			}
			off += in.Len
		}
		if off != len(code) {
			t.Fatalf("instructions cover %d of %d bytes", off, len(code))
		}
	})
}
