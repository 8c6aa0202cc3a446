package checkpoint

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// The format-4+ trailer is one Java Object Serialization stream holding a CheckpointProperties
// object or null (spec §5.3). This file decodes the small subset of the serialization grammar
// such a stream uses: null, back-references, class descriptors, objects with primitive and
// object fields, strings and enum constants.

// Java serialization stream constants.
const (
	jsMagic        = 0xACED
	jsVersion      = 5
	jsNull         = 0x70
	jsReference    = 0x71
	jsClassDesc    = 0x72
	jsObject       = 0x73
	jsString       = 0x74
	jsBlockData    = 0x77
	jsEndBlockData = 0x78
	jsBlockDataL   = 0x7A
	jsLongString   = 0x7C
	jsEnum         = 0x7E
	jsBaseHandle   = 0x7E0000
	jsWriteMethod  = 0x01 // SC_WRITE_METHOD: the class writes extra data after its fields

	propertiesClass    = "org.apache.flink.runtime.checkpoint.CheckpointProperties"
	checkpointTypeName = "org.apache.flink.runtime.checkpoint.CheckpointType"
	savepointTypeName  = "org.apache.flink.runtime.checkpoint.SavepointType"
)

type jsClass struct {
	name   string
	flags  byte
	fields []jsField
	super  *jsClass
}

type jsField struct {
	typ  byte
	name string
}

type jsObj struct {
	class  *jsClass
	values map[string]any // bool, int64, float64, string, *jsObj, jsEnumConst, nil
}

type jsEnumConst struct {
	class string
	name  string
}

type jsDecoder struct {
	b       []byte
	pos     int
	handles []any
	depth   int
}

type jsAbort struct{ err *FormatError }

// errTrailerTruncated marks a trailer that ends inside its Java serialization stream: Flink's
// ObjectInputStream fails with an EOFException there, so the file cannot be restored.
var errTrailerTruncated = errors.New("truncated Java serialization stream")

func (j *jsDecoder) fail(msg string) {
	panic(jsAbort{&FormatError{Offset: int64(j.pos), Field: "trailer", Msg: "CheckpointProperties: " + msg}})
}

// failTruncated stops decoding because the stream ends before what it announces.
func (j *jsDecoder) failTruncated(msg string) {
	panic(jsAbort{&FormatError{Offset: int64(j.pos), Field: "trailer", Msg: "CheckpointProperties: " + msg, Err: errTrailerTruncated}})
}

func (j *jsDecoder) next(n int) []byte {
	if n < 0 {
		j.fail("negative length")
	}
	if len(j.b)-j.pos < n {
		j.failTruncated("unexpected end of the Java serialization stream")
	}
	b := j.b[j.pos : j.pos+n]
	j.pos += n
	return b
}

func (j *jsDecoder) u8() byte    { return j.next(1)[0] }
func (j *jsDecoder) u16() uint16 { return binary.BigEndian.Uint16(j.next(2)) }
func (j *jsDecoder) i32() int32  { return int32(binary.BigEndian.Uint32(j.next(4))) }
func (j *jsDecoder) i64() int64  { return int64(binary.BigEndian.Uint64(j.next(8))) }

func (j *jsDecoder) utf(n int) string {
	s, err := decodeMUTF8(j.next(n))
	if err != nil {
		j.fail(err.Error())
	}
	return s
}

// decodeProperties decodes the trailer; a Java null gives nil, nil.
func decodeProperties(b []byte) (p *CheckpointProperties, err error) {
	p, _, err = decodePropertiesLen(b)
	return p, err
}

// decodePropertiesLen is decodeProperties that also returns how many bytes of b the Java stream
// took: bytes after it are not part of the trailer (Flink's ObjectInputStream stops after one
// object).
func decodePropertiesLen(b []byte) (p *CheckpointProperties, n int, err error) {
	j := &jsDecoder{b: b}
	defer func() {
		n = j.pos
		if r := recover(); r != nil {
			a, ok := r.(jsAbort)
			if !ok {
				panic(r)
			}
			p, err = nil, a.err
		}
	}()
	if magic := j.u16(); magic != jsMagic {
		j.pos = 0
		j.fail("not a Java serialization stream (magic " + strconv.FormatUint(uint64(magic), 16) + ")")
	}
	if v := j.u16(); v != jsVersion {
		j.pos = 2
		j.fail("unsupported Java serialization version " + strconv.Itoa(int(v)))
	}
	v := j.content()
	if v == nil {
		return nil, j.pos, nil
	}
	o, ok := v.(*jsObj)
	if !ok || o.class.name != propertiesClass {
		j.fail("the trailer does not hold a " + propertiesClass)
	}
	return propertiesFrom(j, o), j.pos, nil
}

func propertiesFrom(j *jsDecoder, o *jsObj) *CheckpointProperties {
	flag := func(name string) bool { b, _ := o.values[name].(bool); return b }
	p := &CheckpointProperties{
		Forced:           flag("forced"),
		Unclaimed:        flag("unclaimed"),
		DiscardSubsumed:  flag("discardSubsumed"),
		DiscardFinished:  flag("discardFinished"),
		DiscardCancelled: flag("discardCancelled"),
		DiscardFailed:    flag("discardFailed"),
		DiscardSuspended: flag("discardSuspended"),
	}
	t, ok := o.values["checkpointType"].(*jsObj)
	if !ok {
		j.fail("checkpointType is not an object")
	}
	str := func(name string) string {
		switch v := t.values[name].(type) {
		case string:
			return v
		case jsEnumConst:
			return v.name
		}
		return ""
	}
	switch t.class.name {
	case checkpointTypeName:
		p.SharingStrategy = str("sharingFilesStrategy")
	case savepointTypeName:
		p.Savepoint = true
		p.SavepointFormat = str("formatType")
		p.PostCheckpointAct = str("postCheckpointAction")
	default:
		j.fail("unknown snapshot type class " + t.class.name)
	}
	p.Name = str("name")
	return p
}

func (j *jsDecoder) newHandle(v any) int {
	j.handles = append(j.handles, v)
	return len(j.handles) - 1
}

// content reads one object-stream element.
func (j *jsDecoder) content() any {
	j.depth++
	defer func() { j.depth-- }()
	if j.depth > maxDepth {
		j.fail("nested too deeply")
	}
	start := j.pos
	switch tc := j.u8(); tc {
	case jsNull:
		return nil
	case jsReference:
		h := int(j.i32()) - jsBaseHandle
		if h < 0 || h >= len(j.handles) {
			j.pos = start
			j.fail("back-reference to unknown handle " + strconv.Itoa(h+jsBaseHandle))
		}
		return j.handles[h]
	case jsClassDesc:
		j.pos = start
		return j.classDesc()
	case jsString:
		s := j.utf(int(j.u16()))
		j.newHandle(s)
		return s
	case jsLongString:
		n := j.i64()
		if n < 0 {
			j.fail("long string length out of range")
		}
		if n > int64(len(j.b)-j.pos) {
			j.failTruncated("long string length exceeds the stream")
		}
		s := j.utf(int(n))
		j.newHandle(s)
		return s
	case jsEnum:
		c := j.classDesc()
		if c == nil {
			j.fail("enum without class")
		}
		h := j.newHandle(nil)
		name, ok := j.content().(string)
		if !ok {
			j.fail("enum constant name is not a string")
		}
		e := jsEnumConst{class: c.name, name: name}
		j.handles[h] = e
		return e
	case jsObject:
		c := j.classDesc()
		if c == nil {
			j.fail("object without class")
		}
		o := &jsObj{class: c, values: map[string]any{}}
		j.newHandle(o)
		var chain []*jsClass
		for k := c; k != nil; k = k.super {
			chain = append(chain, k)
			if len(chain) > maxDepth {
				j.fail("class hierarchy too deep")
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			for _, f := range chain[i].fields {
				o.values[f.name] = j.fieldValue(f.typ)
			}
			if chain[i].flags&jsWriteMethod != 0 {
				j.skipAnnotation()
			}
		}
		return o
	default:
		j.pos = start
		j.fail("unsupported type code " + strconv.Itoa(int(tc)))
	}
	return nil
}

// classDesc reads a class descriptor, a reference to one, or null.
func (j *jsDecoder) classDesc() *jsClass {
	start := j.pos
	switch tc := j.u8(); tc {
	case jsNull:
		return nil
	case jsReference:
		j.pos = start
		c, ok := j.content().(*jsClass)
		if !ok {
			j.pos = start
			j.fail("reference is not a class descriptor")
		}
		return c
	case jsClassDesc:
		c := &jsClass{}
		c.name = j.utf(int(j.u16()))
		j.i64() // serialVersionUID
		j.newHandle(c)
		c.flags = j.u8()
		n := int(j.u16())
		if n*3 > len(j.b)-j.pos {
			j.failTruncated("field count exceeds the stream")
		}
		for i := 0; i < n; i++ {
			f := jsField{typ: j.u8()}
			f.name = j.utf(int(j.u16()))
			switch f.typ {
			case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
			case 'L', '[':
				if _, ok := j.content().(string); !ok {
					j.fail("field type signature is not a string")
				}
			default:
				j.fail("unknown field type code " + strconv.Quote(string(rune(f.typ))))
			}
			c.fields = append(c.fields, f)
		}
		j.skipAnnotation()
		c.super = j.classDesc()
		return c
	default:
		j.pos = start
		j.fail("expected a class descriptor, found type code " + strconv.Itoa(int(tc)))
	}
	return nil
}

func (j *jsDecoder) fieldValue(typ byte) any {
	switch typ {
	case 'Z':
		return j.u8() != 0
	case 'B':
		return int64(int8(j.u8()))
	case 'C', 'S':
		return int64(int16(j.u16()))
	case 'I', 'F':
		return int64(j.i32())
	case 'J', 'D':
		return j.i64()
	}
	return j.content()
}

// skipAnnotation skips class or object annotations up to TC_ENDBLOCKDATA.
func (j *jsDecoder) skipAnnotation() {
	for {
		if j.pos >= len(j.b) {
			j.failTruncated("unexpected end of the Java serialization stream")
		}
		switch j.b[j.pos] {
		case jsEndBlockData:
			j.pos++
			return
		case jsBlockData:
			j.pos++
			j.next(int(j.u8()))
		case jsBlockDataL:
			j.pos++
			j.next(int(j.i32()))
		default:
			j.content()
		}
	}
}

// String summarises the properties the way Flink names them, e.g. "Savepoint (CANONICAL)".
func (p *CheckpointProperties) String() string {
	if p == nil {
		return "<nil>"
	}
	var sb strings.Builder
	sb.WriteString(p.Name)
	if p.SavepointFormat != "" {
		sb.WriteString(" (" + p.SavepointFormat + ")")
	}
	return sb.String()
}
