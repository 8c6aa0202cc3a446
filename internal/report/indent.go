package report

import (
	"bufio"
	"io"
)

// indentJSON writes the valid JSON src to w indented as json.Indent(dst, src, "", "  ") would,
// without building the indented copy in memory: a report of 300,000 states is 70 MB indented,
// half that compact. src must be valid JSON (protojson's output).
func indentJSON(w io.Writer, src []byte) error {
	b := bufio.NewWriterSize(w, 64<<10)
	depth := 0
	newline := func() {
		b.WriteByte('\n')
		for range depth {
			b.WriteString("  ")
		}
	}
	inString, escaped := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			inString = true
			b.WriteByte(c)
		case '{', '[':
			b.WriteByte(c)
			j := i + 1
			for j < len(src) && isSpace(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '}' || src[j] == ']') {
				b.WriteByte(src[j]) // "{}" and "[]" stay on one line
				i = j
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			newline()
		case ':':
			b.WriteString(": ")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\n')
	return b.Flush()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
