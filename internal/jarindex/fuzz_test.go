package jarindex

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/flinkpreflight/preflight/internal/jarindex/jartest"
)

// FuzzIndex: any bytes as a jar give an index or an error, never a panic or a hang, within the
// limits; every class that indexes can have its constant pool read or give an error.
func FuzzIndex(f *testing.F) {
	var buf bytes.Buffer
	j := jartest.Jar{}.AddClasses(jartest.Class{Name: "a.B", Refs: []string{"c.D"}, SigRefs: []string{"e.F", "g.H"}}).AddPom("g", "a", "1")
	j["META-INF/versions/11/a/B.class"] = jartest.ClassFile(jartest.Class{Name: "a.B", Major: 55})
	p := f.TempDir() + "/seed.jar"
	if err := jartest.WriteJar(p, j); err == nil {
		b, _ := readFile(p)
		buf.Write(b)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, data []byte) {
		jar, err := Index(context.Background(), bytes.NewReader(data), int64(len(data)), "fuzz.jar", Options{ClassVersions: true, Limits: Limits{MaxEntries: 10_000, MaxEntryBytes: 1 << 20}})
		if err != nil {
			return
		}
		for i := range jar.Classes {
			_ = jar.ClassRefs(&jar.Classes[i], func([]byte) {})
		}
	})
}

// FuzzClassRefs: any bytes as a class file give references or an error.
func FuzzClassRefs(f *testing.F) {
	f.Add(jartest.ClassFile(jartest.Class{Name: "a.B", Refs: []string{"[Lc/D;", "[[I"}, SigRefs: []string{"e.F", "g.H"}}))
	f.Add([]byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52, 0, 3, 5, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ClassRefs(bytes.NewReader(data), int64(len(data)), func(b []byte) {
			if len(b) == 0 {
				t.Fatal("empty class name visited")
			}
		})
	})
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }
