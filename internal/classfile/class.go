package classfile

// Method returns the method with this name and descriptor, nil if none.
func (c *Class) Method(name, desc string) *Method {
	for i := range c.Methods {
		if c.Methods[i].Name == name && c.Methods[i].Desc == desc {
			return &c.Methods[i]
		}
	}
	return nil
}

// Field returns the field with this name, nil if none.
func (c *Class) Field(name string) *Field {
	for i := range c.Fields {
		if c.Fields[i].Name == name {
			return &c.Fields[i]
		}
	}
	return nil
}

// BootstrapMethod resolves the bootstrap method of an invokedynamic or Dynamic constant: its
// handle and the pool indexes of its static arguments. ok is false when i is outside the
// BootstrapMethods attribute.
func (c *Class) BootstrapMethod(i uint16) (MethodHandle, []uint16, bool) {
	if int(i) >= len(c.Bootstrap) {
		return MethodHandle{}, nil, false
	}
	bm := c.Bootstrap[i]
	h, ok := c.Pool.MethodHandle(bm.Ref)
	return h, bm.Args, ok
}

// Line returns the source line of the instruction at pc from the LineNumberTable, 0 if unknown.
// The entry with the largest start_pc not after pc applies.
func (c *Code) Line(pc int) int {
	best, line := -1, 0
	for _, l := range c.Lines {
		if int(l.StartPC) <= pc && int(l.StartPC) > best {
			best, line = int(l.StartPC), int(l.Line)
		}
	}
	return line
}

// BinaryName turns an internal name ("org/example/Op$Inner") into a binary name
// ("org.example.Op$Inner").
func BinaryName(internal string) string {
	b := []byte(internal)
	for i, ch := range b {
		if ch == '/' {
			b[i] = '.'
		}
	}
	return string(b)
}

// ArgSlots returns the number of local variable slots a method descriptor's parameters take
// (long and double take two) and whether it is well formed; the receiver is not counted.
func ArgSlots(desc string) (int, bool) {
	params, _, ok := ParseDescriptor(desc)
	n := 0
	for _, p := range params {
		n += TypeSlots(p)
	}
	return n, ok
}

// TypeSlots is 2 for long and double, 0 for void, 1 for everything else.
func TypeSlots(t string) int {
	switch t {
	case "J", "D":
		return 2
	case "V", "":
		return 0
	}
	return 1
}

// ParseDescriptor splits a method descriptor "(ILjava/lang/String;[J)V" into its parameter
// types ["I" "Ljava/lang/String;" "[J"] and return type "V".
func ParseDescriptor(desc string) (params []string, ret string, ok bool) {
	if len(desc) < 3 || desc[0] != '(' {
		return nil, "", false
	}
	i := 1
	for i < len(desc) && desc[i] != ')' {
		n := fieldTypeLen(desc[i:])
		if n == 0 {
			return nil, "", false
		}
		params = append(params, desc[i:i+n])
		i += n
	}
	if i >= len(desc) {
		return nil, "", false
	}
	ret = desc[i+1:]
	if ret != "V" && fieldTypeLen(ret) != len(ret) {
		return nil, "", false
	}
	return params, ret, true
}

// fieldTypeLen is the length of the field type at the start of s, 0 if malformed.
func fieldTypeLen(s string) int {
	i := 0
	for i < len(s) && s[i] == '[' {
		i++
	}
	if i >= len(s) || i > 255 {
		return 0
	}
	switch s[i] {
	case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
		return i + 1
	case 'L':
		for j := i + 1; j < len(s); j++ {
			if s[j] == ';' {
				if j == i+1 {
					return 0
				}
				return j + 1
			}
		}
	}
	return 0
}
