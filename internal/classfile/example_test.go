package classfile_test

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// A class file as javac writes it for `class A { void m() { return; } }`, reduced to one method.
var classBytes = []byte{
	0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61, // magic, Java 17
	0, 7, // constant pool: 6 entries
	1, 0, 1, 'A', 7, 0, 1, // 1 Utf8 "A", 2 Class A
	1, 0, 1, 'm', 1, 0, 3, '(', ')', 'V', 1, 0, 4, 'C', 'o', 'd', 'e', // 3 m, 4 ()V, 5 Code
	1, 0, 0, // 6 "" (unused)
	0, 0x20, 0, 2, 0, 0, 0, 0, // access, this A, no super, no interfaces
	0, 0, // fields
	0, 1, 0, 0, 0, 3, 0, 4, 0, 1, // one method m()V with one attribute
	0, 5, 0, 0, 0, 14, 0, 1, 0, 1, 0, 0, 0, 2, 0x03, 0xB1, 0, 0, 0, 0, // Code: max stack 1, max locals 1, iconst_0, return
	0, 0, // class attributes
}

func Example() {
	c, err := classfile.Parse(classBytes)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range c.Methods {
		ins, err := classfile.DecodeAll(m.Code.Bytes)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, in := range ins {
			fmt.Printf("%s%s %d: %s\n", m.Name, m.Desc, in.Off, in.Op)
		}
	}
	// Output:
	// m()V 0: iconst_0
	// m()V 1: return
}
