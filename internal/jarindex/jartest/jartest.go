// Package jartest builds real class files and jars for tests, without a JDK: ClassFile writes a
// valid class file (JVMS §4) whose constant pool references the given classes, and WriteJar packs
// entries with archive/zip as a build tool would.
package jartest

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Java 8's class file major version, the default of ClassFile.
const Java8 = 52

// Class describes one class file to write.
type Class struct {
	Name  string   // binary name with dots
	Super string   // default java.lang.Object
	Major uint16   // default Java8
	Refs  []string // classes the constant pool names (CONSTANT_Class)
	// SigRefs appear only inside a method descriptor, as a method signature would name them.
	SigRefs []string
	// Salt changes the bytes (a different "version" of the same class).
	Salt string
}

// ClassFile returns the class file bytes: magic, version, a constant pool with this class,
// super class, one CONSTANT_Class per ref, a method "run" whose descriptor names the SigRefs,
// and no fields, methods or attributes beyond that.
func ClassFile(c Class) []byte {
	var pool bytes.Buffer
	n := 1
	utf8 := func(s string) int {
		pool.WriteByte(1)
		binary.Write(&pool, binary.BigEndian, uint16(len(s)))
		pool.WriteString(s)
		n++
		return n - 1
	}
	class := func(name string) int {
		u := utf8(strings.ReplaceAll(name, ".", "/"))
		pool.WriteByte(7)
		binary.Write(&pool, binary.BigEndian, uint16(u))
		n++
		return n - 1
	}
	super := c.Super
	if super == "" {
		super = "java.lang.Object"
	}
	this := class(c.Name)
	sup := class(super)
	for _, r := range c.Refs {
		class(r)
	}
	desc := "()V"
	if len(c.SigRefs) > 0 {
		var b strings.Builder
		b.WriteString("(")
		for _, r := range c.SigRefs[1:] {
			b.WriteString("L" + strings.ReplaceAll(r, ".", "/") + ";")
		}
		b.WriteString(")L" + strings.ReplaceAll(c.SigRefs[0], ".", "/") + ";")
		desc = b.String()
	}
	nameIdx := utf8("run")
	descIdx := utf8(desc)
	if c.Salt != "" {
		utf8(c.Salt)
	}
	major := c.Major
	if major == 0 {
		major = Java8
	}
	var out bytes.Buffer
	binary.Write(&out, binary.BigEndian, uint32(0xCAFEBABE))
	binary.Write(&out, binary.BigEndian, uint16(0))
	binary.Write(&out, binary.BigEndian, major)
	binary.Write(&out, binary.BigEndian, uint16(n))
	out.Write(pool.Bytes())
	binary.Write(&out, binary.BigEndian, uint16(0x0421)) // public abstract super
	binary.Write(&out, binary.BigEndian, uint16(this))
	binary.Write(&out, binary.BigEndian, uint16(sup))
	binary.Write(&out, binary.BigEndian, uint16(0)) // interfaces
	binary.Write(&out, binary.BigEndian, uint16(0)) // fields
	binary.Write(&out, binary.BigEndian, uint16(1)) // methods: public abstract run
	binary.Write(&out, binary.BigEndian, uint16(0x0401))
	binary.Write(&out, binary.BigEndian, uint16(nameIdx))
	binary.Write(&out, binary.BigEndian, uint16(descIdx))
	binary.Write(&out, binary.BigEndian, uint16(0)) // method attributes
	binary.Write(&out, binary.BigEndian, uint16(0)) // class attributes
	return out.Bytes()
}

// Jar is the content of a jar to write: entry name → bytes.
type Jar map[string][]byte

// AddClasses adds class files.
func (j Jar) AddClasses(cs ...Class) Jar {
	for _, c := range cs {
		j[strings.ReplaceAll(c.Name, ".", "/")+".class"] = ClassFile(c)
	}
	return j
}

// AddPom adds META-INF/maven/G/A/pom.properties as the shade plugin keeps it.
func (j Jar) AddPom(group, artifact, version string) Jar {
	j["META-INF/maven/"+group+"/"+artifact+"/pom.properties"] = []byte(fmt.Sprintf("version=%s\ngroupId=%s\nartifactId=%s\n", version, group, artifact))
	return j
}

// WriteJar writes the jar at path (parent folders created) with a manifest first and entries in
// name order, deflated.
func WriteJar(path string, j Jar) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(j))
	for n := range j {
		names = append(names, n)
	}
	sort.Strings(names)
	if _, ok := j["META-INF/MANIFEST.MF"]; !ok {
		w, err := zw.Create("META-INF/MANIFEST.MF")
		if err != nil {
			return err
		}
		w.Write([]byte("Manifest-Version: 1.0\r\n\r\n"))
	}
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			return err
		}
		if _, err := w.Write(j[n]); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
