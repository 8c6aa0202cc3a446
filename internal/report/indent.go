package report

import (
	"bufio"
	"io"
)

// indenter writes valid JSON, fed in pieces of any length, indented as
// json.Indent(dst, src, "", "  ") would, without building the indented copy in memory: a report
// of hundreds of thousands of states is tens of MB indented (bench/README.md, "Many state
// names"). The pieces together must be valid JSON (protojson's output); whitespace outside
// strings is dropped.
type indenter struct {
	b             *bufio.Writer
	depth         int
	inString, esc bool
	pending       bool // a '{' or '[' was written: "{}" and "[]" stay on one line
}

func newIndenter(w io.Writer) *indenter {
	return &indenter{b: bufio.NewWriterSize(w, 64<<10)}
}

func (d *indenter) newline() {
	d.b.WriteByte('\n')
	for range d.depth {
		d.b.WriteString("  ")
	}
}

// write indents the next piece of the document.
func (d *indenter) write(src []byte) {
	b := d.b
	for _, c := range src {
		if d.inString {
			b.WriteByte(c)
			switch {
			case d.esc:
				d.esc = false
			case c == '\\':
				d.esc = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		if isSpace(c) {
			continue
		}
		if d.pending {
			d.pending = false
			if c == '}' || c == ']' {
				b.WriteByte(c)
				continue
			}
			d.depth++
			d.newline()
		}
		switch c {
		case '"':
			d.inString = true
			b.WriteByte(c)
		case '{', '[':
			b.WriteByte(c)
			d.pending = true
		case '}', ']':
			d.depth--
			d.newline()
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			d.newline()
		case ':':
			b.WriteString(": ")
		default:
			b.WriteByte(c)
		}
	}
}

// finish ends the document with a newline and flushes it.
func (d *indenter) finish() error {
	d.b.WriteByte('\n')
	return d.b.Flush()
}

// indentJSON writes the valid JSON src to w indented (see indenter).
func indentJSON(w io.Writer, src []byte) error {
	d := newIndenter(w)
	d.write(src)
	return d.finish()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
