package rescale

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// scratch is per-worker memory for the operator pass, reused across operators.
type scratch struct {
	elems, sbytes, payload, inline []int64
	kread, kowned, cbytes          []int64
	bits                           []uint64
}

func grow(s []int64, n int) []int64 {
	if cap(s) < n {
		return make([]int64, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// blockWords bounds the stream bitset of one block of subtasks (256 KiB).
const blockWords = 1 << 15

// summarize is the one tight pass over an operator's new subtasks: it fills the per-state bytes
// of SPLIT_DISTRIBUTE on the rescale path, the keyed and channel summaries, and the operator
// summary. Distinct streams per subtask are counted with a bitset over the old streams, one block
// of subtasks at a time.
func (sim *operatorSim) summarize(sc *scratch) {
	a := sim.a
	newP := sim.newP
	sc.elems = grow(sc.elems, newP)
	sc.sbytes = grow(sc.sbytes, newP)
	sc.payload = grow(sc.payload, newP)
	sc.inline = grow(sc.inline, newP)
	sc.kread = grow(sc.kread, newP)
	sc.kowned = grow(sc.kowned, newP)
	sc.cbytes = grow(sc.cbytes, newP)

	if len(a.States) > 0 {
		w := (len(sim.streams) + 63) / 64
		block := max(1, min(newP, blockWords/w))
		if cap(sc.bits) < block*w {
			sc.bits = make([]uint64, block*w)
		}
		for _, s := range a.States {
			if s.Mode == checkpoint.SplitDistribute && s.d.path == PathRescale {
				s.Summary.MinBytes, s.Summary.MaxBytes = -1, 0
			}
		}
		for b0 := 0; b0 < newP; b0 += block {
			b1 := min(b0+block, newP)
			bits := sc.bits[:(b1-b0)*w]
			if sim.unionMask != nil {
				for t := b0; t < b1; t++ {
					copy(bits[(t-b0)*w:], sim.unionMask)
					sc.payload[t] += sim.unionCost
					sc.inline[t] += sim.unionInline
				}
			} else {
				clear(bits)
			}
			p := pass{sim: sim, sc: sc, bits: bits, w: w, b0: b0}
			for _, s := range a.States {
				p.state(s, b0, b1)
			}
		}
	}
	for _, k := range []*KeyedDistribution{a.ManagedKeyed, a.RawKeyed} {
		if k != nil {
			k.accumulate(sc)
		}
	}
	channelMax := int64(0)
	for _, c := range []*ChannelDistribution{a.InputChannels, a.OutputChannels} {
		if c == nil {
			continue
		}
		a.Summary.ChannelBytes += c.Bytes
		if !c.accumulate(sc) {
			channelMax = -1
		}
	}

	sum := &a.Summary
	sum.MinElements, sum.MinStateBytes = -1, -1
	var ownedTotal int64
	for t := 0; t < newP; t++ {
		el, b := sc.elems[t], sc.sbytes[t]
		if el == 0 {
			sum.EmptySubtasks++
		}
		if sum.MinElements < 0 || el < sum.MinElements {
			sum.MinElements = el
		}
		sum.MaxElements = max(sum.MaxElements, el)
		if sum.MinStateBytes < 0 || b < sum.MinStateBytes {
			sum.MinStateBytes = b
		}
		sum.MaxStateBytes = max(sum.MaxStateBytes, b)
		if p := sc.payload[t]; p > sum.MaxPayloadBytes || t == 0 {
			sum.MaxPayloadBytes, sum.MaxPayloadSubtask = p, t
		}
		sum.TotalPayloadBytes += sc.payload[t]
		sum.MaxInlineBytes = max(sum.MaxInlineBytes, sc.inline[t])
		sum.KeyedMaxReadBytes = max(sum.KeyedMaxReadBytes, sc.kread[t])
		sum.KeyedMaxOwnedBytes = max(sum.KeyedMaxOwnedBytes, sc.kowned[t])
		ownedTotal += sc.kowned[t]
		if channelMax >= 0 {
			sum.MaxChannelBytes = max(sum.MaxChannelBytes, sc.cbytes[t])
		}
	}
	sum.MaxOffsets = sum.MaxElements
	if newP > 0 && ownedTotal > 0 {
		sum.KeyedMeanOwnedBytes = float64(ownedTotal) / float64(newP)
		sum.KeyedSkew = float64(sum.KeyedMaxOwnedBytes) / sum.KeyedMeanOwnedBytes
	}
	if channelMax < 0 {
		sum.MaxChannelBytes = -1
	}
	sum.KeyedBytes = keyedBytes(a.ManagedKeyed) + keyedBytes(a.RawKeyed)
}

// pass accumulates operator-state shares of one block of subtasks.
type pass struct {
	sim  *operatorSim
	sc   *scratch
	bits []uint64
	w    int
	b0   int
}

// touch counts stream id for subtask t once.
func (p *pass) touch(t int, id int32) {
	word := &p.bits[(t-p.b0)*p.w+int(id>>6)]
	m := uint64(1) << (uint(id) & 63)
	if *word&m == 0 {
		*word |= m
		st := &p.sim.streams[id]
		p.sc.payload[t] += st.cost
		p.sc.inline[t] += st.inline
	}
}

func (p *pass) state(s *StateDistribution, b0, b1 int) {
	d := &s.d
	sc := p.sc
	if s.Mode != checkpoint.SplitDistribute || d.path != PathRescale {
		for t := b0; t < b1; t++ {
			d.eachWhole(t, func(e int) {
				en := &d.entries[e]
				if s.Mode != checkpoint.Union {
					p.touch(t, en.stream)
				}
				sc.elems[t] += en.n
				sc.sbytes[t] += en.bytes
				sc.payload[t] += d.nameOverhead + 8*en.n
			})
		}
		return
	}
	// SPLIT_DISTRIBUTE on the rescale path: subtasks [b0, b1) take the runs
	// k = (t - start) mod newP, at most two contiguous intervals of k.
	n := int64(d.newP)
	k0 := ((int64(b0)-d.start)%n + n) % n
	length := int64(b1 - b0)
	ivs := [2][2]int64{{k0, min(k0+length, n)}, {0, max(0, k0+length-n)}}
	for _, iv := range ivs {
		if iv[1] <= iv[0] {
			continue
		}
		l, _ := d.run(iv[0])
		e, off := d.cursorAt(l)
		t := int((d.start + iv[0]) % n)
		for k := iv[0]; k < iv[1]; k++ {
			c := d.base
			if k < d.rem {
				c++
			}
			run := c
			var runBytes int64
			for c > 0 {
				en := &d.entries[e]
				avail := en.n - off
				take := min(avail, c)
				runBytes += en.sum(off, take)
				p.touch(t, en.stream)
				sc.payload[t] += d.nameOverhead + 8*take
				if avail > c {
					off += c
				} else {
					off = 0
					e++
				}
				c -= avail
			}
			sc.elems[t] += run
			sc.sbytes[t] += runBytes
			if s.Summary.MinBytes < 0 || runBytes < s.Summary.MinBytes {
				s.Summary.MinBytes = runBytes
			}
			s.Summary.MaxBytes = max(s.Summary.MaxBytes, runBytes)
			if t++; t == d.newP {
				t = 0
			}
		}
	}
}

func keyedBytes(k *KeyedDistribution) int64 {
	if k == nil {
		return 0
	}
	return k.Bytes
}
