package rescale

import (
	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// acc accumulates one new subtask in the operator pass.
type acc struct {
	elems, sbytes, payload, inline int64
}

// xacc accumulates keyed and channel state, only for operators that have them.
type xacc struct {
	kread, kowned, cbytes int64
}

// scratch is per-worker memory for the operator pass, reused across operators.
type scratch struct {
	acc  []acc
	xacc []xacc
	bits []uint64
	// stop is the current operator's cancellation flag, for the per-subtask loops.
	stop *cancel.Flag
}

// blockWords bounds the stream bitset of one block of subtasks (256 KiB).
const blockWords = 1 << 15

// summarize is the one tight pass over an operator's new subtasks: it fills the per-state bytes
// of SPLIT_DISTRIBUTE on the rescale path, the keyed and channel summaries, and the operator
// summary. Distinct streams per subtask are counted with a bitset over the old streams, one block
// of subtasks at a time.
func (sim *operatorSim) summarize(sc *scratch) {
	sc.stop = sim.stop
	sim.startAccumulators(sc)
	if len(sim.states) > 0 {
		sim.operatorStatePass(sc)
	}
	extra, channelMax := sim.keyedAndChannelPass(sc)
	sim.fillSummary(sc, extra, channelMax)
}

// startAccumulators sets every new subtask's accumulator to what it gets regardless of the
// split: the UNION entries and the kept handles without names.
func (sim *operatorSim) startAccumulators(sc *scratch) {
	newP := sim.newP
	if cap(sc.acc) < newP {
		sc.acc = make([]acc, newP)
	}
	sc.acc = sc.acc[:newP]
	// UNION: every subtask receives every entry; it starts each subtask's accumulator.
	var init acc
	for k := range sim.states {
		if s := &sim.states[k]; s.Mode == checkpoint.Union {
			elements := sim.elements(s)
			init.elems += elements
			init.sbytes += s.Bytes
			init.payload += int64(s.OldEntries)*sim.nameOverhead(s) + 8*elements
		}
	}
	init.payload += sim.unionCost
	init.inline = sim.unionInline
	if len(sc.acc) > 0 {
		sc.acc[0] = init
		for n := 1; n < len(sc.acc); n *= 2 {
			copy(sc.acc[n:], sc.acc[:n])
		}
	}
	if sim.keptMask != nil {
		// Old handles without names, kept by subtask t at unchanged parallelism: no entry
		// references their streams, so they are counted here once.
		for t := 0; t < min(newP, sim.oldP); t++ {
			for _, id := range sim.keptStreams(t) {
				sc.acc[t].payload += sim.streams[id].cost
				sc.acc[t].inline += sim.streams[id].inline
			}
		}
	}
}

// operatorStatePass adds the operator states' shares, one block of subtasks at a time.
func (sim *operatorSim) operatorStatePass(sc *scratch) {
	newP := sim.newP
	w := (len(sim.streams) + 63) / 64
	block := max(1, min(newP, blockWords/w))
	if cap(sc.bits) < block*w {
		sc.bits = make([]uint64, block*w)
	}
	var tmp stateRec
	for k := range sim.states {
		if s := sim.rec(k, &tmp); s.Mode == checkpoint.SplitDistribute && s.path == PathRescale {
			s.minBytes, s.maxBytes = -1, 0
			sim.keepBytes(k, s)
		}
	}
	bgroups := sim.broadcastGroups()
	for b0 := 0; b0 < newP; b0 += block {
		b1 := min(b0+block, newP)
		bits := sc.bits[:(b1-b0)*w]
		if sim.unionMask != nil {
			// Every subtask starts with the UNION streams: copy the mask, doubling.
			copy(bits, sim.unionMask)
			for n := w; n < len(bits); n *= 2 {
				copy(bits[n:], bits[:n])
			}
		} else {
			clear(bits)
		}
		p := pass{sim: sim, sc: sc, bits: bits, w: w, b0: b0}
		for _, g := range bgroups {
			sim.stop.Check()
			p.broadcast(g, b0, b1)
		}
		for k := range sim.states {
			sim.stop.Check()
			s := sim.rec(k, &tmp)
			if s.Mode == checkpoint.Broadcast && s.path == PathRescale {
				continue // in bgroups
			}
			p.state(s, b0, b1)
			sim.keepBytes(k, s)
		}
	}
	for k := range sim.states {
		if s := sim.rec(k, &tmp); s.Mode == checkpoint.SplitDistribute && s.path == PathRescale && sim.elements(s) < int64(newP) {
			s.minBytes = 0 // the runs without elements
			sim.keepBytes(k, s)
		}
	}
}

// keyedAndChannelPass accumulates keyed and channel state; extra says whether the operator has
// any, channelMax is -1 when a channel distribution cannot give per-subtask bytes.
func (sim *operatorSim) keyedAndChannelPass(sc *scratch) (extra bool, channelMax int64) {
	a, newP := sim.a, sim.newP
	extra = a.ManagedKeyed != nil || a.RawKeyed != nil || a.InputChannels != nil || a.OutputChannels != nil
	if extra {
		if cap(sc.xacc) < newP {
			sc.xacc = make([]xacc, newP)
		}
		sc.xacc = sc.xacc[:newP]
		clear(sc.xacc)
	}
	for _, k := range []*KeyedDistribution{a.ManagedKeyed, a.RawKeyed} {
		if k != nil {
			k.accumulate(sc)
		}
	}
	for _, c := range []*ChannelDistribution{a.InputChannels, a.OutputChannels} {
		if c == nil {
			continue
		}
		a.Summary.ChannelBytes += c.Bytes
		if !c.accumulate(sc) {
			channelMax = -1
		}
	}
	return extra, channelMax
}

// fillSummary folds the per-subtask accumulators into the operator summary.
func (sim *operatorSim) fillSummary(sc *scratch, extra bool, channelMax int64) {
	a, newP := sim.a, sim.newP
	sum := &a.Summary
	sum.MinElements, sum.MinStateBytes = -1, -1
	var ownedTotal int64
	for t := range sc.acc {
		x := &sc.acc[t]
		el, b := x.elems, x.sbytes
		if el == 0 {
			sum.EmptySubtasks++
		}
		widen(&sum.MinElements, &sum.MaxElements, el)
		widen(&sum.MinStateBytes, &sum.MaxStateBytes, b)
		sum.TotalStateBytes += b
		if x.payload > sum.MaxPayloadBytes || t == 0 {
			sum.MaxPayloadBytes, sum.MaxPayloadSubtask = x.payload, t
		}
		sum.TotalPayloadBytes += x.payload
		sum.MaxInlineBytes = max(sum.MaxInlineBytes, x.inline)
	}
	if extra {
		for t := range sc.xacc {
			x := &sc.xacc[t]
			sum.KeyedMaxReadBytes = max(sum.KeyedMaxReadBytes, x.kread)
			sum.KeyedMaxOwnedBytes = max(sum.KeyedMaxOwnedBytes, x.kowned)
			ownedTotal += x.kowned
			if channelMax >= 0 {
				sum.MaxChannelBytes = max(sum.MaxChannelBytes, x.cbytes)
			}
		}
	}
	sum.MaxOffsets = sum.MaxElements
	sum.KeyedTotalOwnedBytes = ownedTotal
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
		p.sc.acc[t].payload += st.cost
		p.sc.acc[t].inline += st.inline
	}
}

// whole adds entry en, which new subtask t receives whole, to t's totals.
func (p *pass) whole(t int, d *stateDist, en *oldEntry) {
	p.touch(t, d.stream(en))
	acc := &p.sc.acc[t]
	acc.elems += en.n
	acc.sbytes += en.bytes
	acc.payload += d.nameOverhead + 8*en.n
}

func (p *pass) state(s *stateRec, b0, b1 int) {
	if s.Mode == checkpoint.Union {
		return // added as a constant by summarize
	}
	sd := p.sim.namedDist(s)
	d := &sd
	sc := p.sc
	switch {
	case d.path != PathRescale && !d.partial:
		// Unchanged parallelism: subtask t keeps old subtask t's entry.
		// Entries are in old-subtask order, one per old subtask.
		for e := d.firstFrom(b0); e < len(d.entries) && int(d.entries[e].old) < b1; e++ {
			p.whole(int(d.entries[e].old), d, &d.entries[e])
		}
		return
	case s.Mode != checkpoint.SplitDistribute || d.path != PathRescale:
		for t := b0; t < b1; t++ {
			d.eachWhole(t, func(e int) { p.whole(t, d, &d.entries[e]) })
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
		if d.base == 0 {
			// Runs from rem on are empty: they take no entry and change nothing.
			iv[1] = min(iv[1], d.rem)
		}
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
				if u := uniform(d.sizes, en); u >= 0 {
					runBytes += u * take
				} else {
					runBytes += d.sum(en, off, take)
				}
				p.touch(t, d.stream(en))
				sc.acc[t].payload += d.nameOverhead + 8*take
				e, off = advance(e, off, avail, c)
				c -= avail
			}
			sc.acc[t].elems += run
			sc.acc[t].sbytes += runBytes
			widen(&s.minBytes, &s.maxBytes, runBytes)
			if t++; t == d.newP {
				t = 0
			}
		}
	}
}

// widen widens the range [*lo, *hi] to hold v; *lo < 0 is the empty range.
func widen(lo, hi *int64, v int64) {
	if *lo < 0 || v < *lo {
		*lo = v
	}
	*hi = max(*hi, v)
}

func keyedBytes(k *KeyedDistribution) int64 {
	if k == nil {
		return 0
	}
	return k.Bytes
}

// broadcastGroup is one or more BROADCAST names on the rescale path whose entries come from the
// same old subtasks in the same order (the usual case: every subtask registers every broadcast
// state). Subtask t gets entry t mod n of each, so their figures are summed per entry once.
type broadcastGroup struct {
	stream                []int32
	elems, bytes, payload []int64
}

func (sim *operatorSim) broadcastGroups() []*broadcastGroup {
	var groups []*broadcastGroup
	var firsts []stateDist
	var tmp stateRec
	for k := range sim.states {
		s := sim.rec(k, &tmp)
		if s.Mode != checkpoint.Broadcast || s.path != PathRescale {
			continue
		}
		sd := sim.namedDist(s)
		d := &sd
		var g *broadcastGroup
		for k := range firsts {
			if sameOldSubtasks(&firsts[k], d) {
				g = groups[k]
				break
			}
		}
		if g == nil {
			n := len(d.entries)
			g = &broadcastGroup{stream: make([]int32, n), elems: make([]int64, n), bytes: make([]int64, n), payload: make([]int64, n)}
			for e := range d.entries {
				g.stream[e] = d.stream(&d.entries[e])
			}
			groups = append(groups, g)
			firsts = append(firsts, *d)
		}
		for e := range d.entries {
			en := &d.entries[e]
			g.elems[e] += en.n
			g.bytes[e] += en.bytes
			g.payload[e] += d.nameOverhead + 8*en.n
		}
	}
	return groups
}

func sameOldSubtasks(a, b *stateDist) bool {
	if len(a.entries) != len(b.entries) {
		return false
	}
	for e := range a.entries {
		if a.stream(&a.entries[e]) != b.stream(&b.entries[e]) {
			return false
		}
	}
	return true
}

func (p *pass) broadcast(g *broadcastGroup, b0, b1 int) {
	n := len(g.stream)
	e := b0 % n
	acc := p.sc.acc
	for t := b0; t < b1; t++ {
		p.touch(t, g.stream[e])
		acc[t].elems += g.elems[e]
		acc[t].sbytes += g.bytes[e]
		acc[t].payload += g.payload[e]
		if e++; e == n {
			e = 0
		}
	}
}
