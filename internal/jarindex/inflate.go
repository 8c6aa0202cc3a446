package jarindex

import (
	"errors"
	"io"
)

// inflatePrefix decodes the first len(out) bytes of a raw DEFLATE stream (RFC 1951) and stops.
// Go's compress/flate decodes a whole block into its 32 KiB window before it returns a byte, so
// reading a class file's 8-byte header through it inflates most of the class; this decoder does
// only the work those bytes need (the block header, its Huffman tables, a few symbols). It follows
// the structure of zlib's reference decoder "puff": canonical Huffman codes decoded bit by bit,
// which is slow per symbol and fast for a handful of them. It returns how many bytes it produced
// (less than len(out) only when the stream ends first) and an error for a malformed stream.
func inflatePrefix(r io.ByteReader, out []byte) (int, error) {
	s := inflater{r: r, out: out}
	for s.n < len(out) {
		last, err := s.bits(1)
		if err != nil {
			return s.n, err
		}
		typ, err := s.bits(2)
		if err != nil {
			return s.n, err
		}
		switch typ {
		case 0:
			err = s.stored()
		case 1:
			err = s.codes(&fixedLit, &fixedDist)
		case 2:
			err = s.dynamic()
		default:
			err = errInflate("invalid block type 3")
		}
		if err != nil && err != errPrefixDone {
			return s.n, err
		}
		if err == errPrefixDone || last == 1 {
			break
		}
	}
	return s.n, nil
}

type errInflate string

func (e errInflate) Error() string { return "deflate: " + string(e) }

var errPrefixDone = errors.New("prefix complete")

type inflater struct {
	r      io.ByteReader
	bitbuf uint32
	bitcnt uint
	out    []byte
	n      int
}

func (s *inflater) bits(need uint) (uint32, error) {
	v := s.bitbuf
	for s.bitcnt < need {
		b, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = errInflate("stream ends early")
			}
			return 0, err
		}
		v |= uint32(b) << s.bitcnt
		s.bitcnt += 8
	}
	s.bitbuf = v >> need
	s.bitcnt -= need
	return v & (1<<need - 1), nil
}

func (s *inflater) emit(b byte) error {
	s.out[s.n] = b
	s.n++
	if s.n == len(s.out) {
		return errPrefixDone
	}
	return nil
}

func (s *inflater) stored() error {
	s.bitbuf, s.bitcnt = 0, 0 // to a byte boundary
	var hdr [4]byte
	for i := range hdr {
		b, err := s.r.ReadByte()
		if err != nil {
			return errInflate("stored block header ends early")
		}
		hdr[i] = b
	}
	n := uint16(hdr[0]) | uint16(hdr[1])<<8
	if ^n != uint16(hdr[2])|uint16(hdr[3])<<8 {
		return errInflate("stored block length does not match its complement")
	}
	for ; n > 0; n-- {
		b, err := s.r.ReadByte()
		if err != nil {
			return errInflate("stored block ends early")
		}
		if err := s.emit(b); err != nil {
			return err
		}
	}
	return nil
}

// huffman is a canonical code: count[len] codes of each length, symbols in code order.
type huffman struct {
	count  [16]uint16
	symbol []uint16
}

// build makes the code from code lengths; it refuses over-subscribed sets (incomplete ones are
// legal for single-code distance trees and simply fail to decode unused codes).
func (h *huffman) build(lengths []uint8) error {
	h.count = [16]uint16{}
	for _, l := range lengths {
		h.count[l]++
	}
	if int(h.count[0]) == len(lengths) {
		h.symbol = h.symbol[:0]
		return nil
	}
	left := 1
	for l := 1; l < 16; l++ {
		left <<= 1
		left -= int(h.count[l])
		if left < 0 {
			return errInflate("over-subscribed Huffman code")
		}
	}
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	if cap(h.symbol) < len(lengths) {
		h.symbol = make([]uint16, len(lengths))
	}
	h.symbol = h.symbol[:len(lengths)]
	for sym, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(sym)
			offs[l]++
		}
	}
	return nil
}

func (s *inflater) decode(h *huffman) (int, error) {
	code, first, index := 0, 0, 0
	for l := 1; l < 16; l++ {
		b, err := s.bits(1)
		if err != nil {
			return 0, err
		}
		code |= int(b)
		count := int(h.count[l])
		if code-count < first {
			return int(h.symbol[index+(code-first)]), nil
		}
		index += count
		first += count
		first <<= 1
		code <<= 1
	}
	return 0, errInflate("invalid Huffman code")
}

var (
	lenBase   = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	fixedLit  huffman
	fixedDist huffman
	clOrder   = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

func init() {
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	fixedLit.build(l[:])
	var d [30]uint8
	for i := range d {
		d[i] = 5
	}
	fixedDist.build(d[:])
}

func (s *inflater) codes(lit, dist *huffman) error {
	for {
		sym, err := s.decode(lit)
		if err != nil {
			return err
		}
		switch {
		case sym < 256:
			if err := s.emit(byte(sym)); err != nil {
				return err
			}
		case sym == 256:
			return nil
		default:
			sym -= 257
			if sym >= 29 {
				return errInflate("invalid length symbol")
			}
			e, err := s.bits(uint(lenExtra[sym]))
			if err != nil {
				return err
			}
			length := int(lenBase[sym]) + int(e)
			dsym, err := s.decode(dist)
			if err != nil {
				return err
			}
			if dsym >= 30 {
				return errInflate("invalid distance symbol")
			}
			e, err = s.bits(uint(distExtra[dsym]))
			if err != nil {
				return err
			}
			d := int(distBase[dsym]) + int(e)
			if d > s.n {
				return errInflate("distance before the start of the output")
			}
			for ; length > 0; length-- {
				if err := s.emit(s.out[s.n-d]); err != nil {
					return err
				}
			}
		}
	}
}

func (s *inflater) dynamic() error {
	nlen, err := s.bits(5)
	if err != nil {
		return err
	}
	ndist, err := s.bits(5)
	if err != nil {
		return err
	}
	ncode, err := s.bits(4)
	if err != nil {
		return err
	}
	nl, nd := int(nlen)+257, int(ndist)+1
	if nl > 286 || nd > 30 {
		return errInflate("too many length or distance codes")
	}
	var lengths [320]uint8
	for i := 0; i < int(ncode)+4; i++ {
		v, err := s.bits(3)
		if err != nil {
			return err
		}
		lengths[clOrder[i]] = uint8(v)
	}
	var lencode, distcode huffman
	if err := lencode.build(lengths[:19]); err != nil {
		return err
	}
	lengths = [320]uint8{}
	for i := 0; i < nl+nd; {
		sym, err := s.decode(&lencode)
		if err != nil {
			return err
		}
		if sym < 16 {
			lengths[i] = uint8(sym)
			i++
			continue
		}
		var rep uint32
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return errInflate("repeat with no previous length")
			}
			val = lengths[i-1]
			rep, err = s.bits(2)
			rep += 3
		case 17:
			rep, err = s.bits(3)
			rep += 3
		default:
			rep, err = s.bits(7)
			rep += 11
		}
		if err != nil {
			return err
		}
		if i+int(rep) > nl+nd {
			return errInflate("too many code lengths")
		}
		for ; rep > 0; rep-- {
			lengths[i] = val
			i++
		}
	}
	// A table without an end-of-block code is accepted, as compress/flate does: the stream is
	// broken only past the bytes wanted here.
	if err := lencode.build(lengths[:nl]); err != nil {
		return err
	}
	if err := distcode.build(lengths[nl : nl+nd]); err != nil {
		return err
	}
	return s.codes(&lencode, &distcode)
}
