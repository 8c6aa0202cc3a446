package checkpoint

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// Modified UTF-8 is Java's DataOutput.writeUTF encoding: UTF-16 code units, NUL as C0 80, each
// surrogate as its own 3-byte sequence, behind an unsigned 16-bit byte count.
//
// Go strings carry the decoded text as UTF-8; a surrogate pair becomes one 4-byte rune and an
// unpaired surrogate is kept as its 3-byte (WTF-8) form so that decoding never loses a unit.

// maxUTFLen is the largest encoded length writeUTF accepts.
const maxUTFLen = 65535

type mutf8Error struct {
	pos int
	msg string
}

func (e *mutf8Error) Error() string { return e.msg }

// decodeMUTF8 decodes modified UTF-8 exactly as Java's readUTF accepts it.
func decodeMUTF8(b []byte) (string, error) {
	if isPlainASCII(b) {
		return string(b), nil
	}
	out := make([]byte, 0, len(b)+8)
	var pendingHigh rune = -1 // a high surrogate waiting for its low half
	flush := func() {
		if pendingHigh >= 0 {
			out = appendSurrogate(out, pendingHigh)
			pendingHigh = -1
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		var u rune
		switch c >> 4 {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			u = rune(c)
			i++
		case 12, 13:
			if i+2 > len(b) {
				return "", &mutf8Error{i, "malformed modified UTF-8: partial character at end"}
			}
			c2 := b[i+1]
			if c2&0xC0 != 0x80 {
				return "", &mutf8Error{i + 1, fmt.Sprintf("malformed modified UTF-8: bad continuation byte %#02x", c2)}
			}
			u = rune(c&0x1F)<<6 | rune(c2&0x3F)
			i += 2
		case 14:
			if i+3 > len(b) {
				return "", &mutf8Error{i, "malformed modified UTF-8: partial character at end"}
			}
			c2, c3 := b[i+1], b[i+2]
			if c2&0xC0 != 0x80 || c3&0xC0 != 0x80 {
				return "", &mutf8Error{i + 1, fmt.Sprintf("malformed modified UTF-8: bad continuation bytes %#02x %#02x", c2, c3)}
			}
			u = rune(c&0x0F)<<12 | rune(c2&0x3F)<<6 | rune(c3&0x3F)
			i += 3
		default:
			return "", &mutf8Error{i, fmt.Sprintf("malformed modified UTF-8: invalid byte %#02x", c)}
		}
		switch {
		case u >= 0xD800 && u <= 0xDBFF:
			flush()
			pendingHigh = u
		case u >= 0xDC00 && u <= 0xDFFF:
			if pendingHigh >= 0 {
				out = utf8.AppendRune(out, 0x10000+(pendingHigh-0xD800)<<10+(u-0xDC00))
				pendingHigh = -1
			} else {
				out = appendSurrogate(out, u)
			}
		default:
			flush()
			out = utf8.AppendRune(out, u)
		}
	}
	flush()
	return string(out), nil
}

// isPlainASCII reports whether b is ASCII without NUL: its modified UTF-8 decoding is b itself
// (modified UTF-8 writes U+0000 as two bytes, so a 0 byte is malformed).
func isPlainASCII(b []byte) bool {
	// Eight bytes at a time: a byte ≥ 0x80 sets its high bit in w, and a zero byte (the others
	// being below 0x80) sets a high bit in w - 0x0101…01 through the borrow it takes.
	const lows, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		if ((w-lows)|w)&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c == 0 || c >= 0x80 {
			return false
		}
	}
	return true
}

// appendSurrogate appends a lone surrogate in its 3-byte form.
func appendSurrogate(out []byte, u rune) []byte {
	return append(out, 0xE0|byte(u>>12), 0x80|byte(u>>6)&0x3F, 0x80|byte(u)&0x3F)
}

// appendMUTF8 appends the writeUTF form of s (length prefix included). It fails for strings that
// are not UTF-8 (lone surrogates in 3-byte form excepted) and for encodings over 65535 bytes.
func appendMUTF8(dst []byte, s string) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0)
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		dst = append(dst, s...)
	} else {
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				// A lone surrogate kept by decodeMUTF8: ED A0..BF 80..BF.
				if i+3 <= len(s) && s[i] == 0xED && s[i+1]&0xE0 == 0xA0 && s[i+2]&0xC0 == 0x80 {
					dst = append(dst, s[i], s[i+1], s[i+2])
					i += 3
					continue
				}
				return dst[:start], fmt.Errorf("string %.40q is not valid UTF-8 at byte %d", s, i)
			}
			i += size
			switch {
			case r == 0:
				dst = append(dst, 0xC0, 0x80)
			case r < 0x80:
				dst = append(dst, byte(r))
			case r < 0x800:
				dst = append(dst, 0xC0|byte(r>>6), 0x80|byte(r)&0x3F)
			case r < 0x10000:
				dst = append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
			default:
				r -= 0x10000
				dst = appendSurrogate(dst, 0xD800+(r>>10))
				dst = appendSurrogate(dst, 0xDC00+(r&0x3FF))
			}
		}
	}
	n := len(dst) - start - 2
	if n > maxUTFLen {
		return dst[:start], fmt.Errorf("encoded string too long: %d bytes (modified UTF-8 allows %d)", n, maxUTFLen)
	}
	dst[start], dst[start+1] = byte(n>>8), byte(n)
	return dst, nil
}
