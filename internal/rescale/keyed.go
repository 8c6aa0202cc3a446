package rescale

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// keyedOld is one old subtask's keyed state handle.
type keyedOld struct {
	old int
	h   *checkpoint.KeyedStateHandleLayout
	// perKG is set when the handle has per-key-group sizes (key-group handles).
	perKG bool
	cost  int64 // payload of the handle without key-group offsets: overhead + path + inline + files
}

// keyedDist is the compact form of a keyed distribution: the old handles in old-subtask order.
type keyedDist struct {
	rescale bool // old and new parallelism differ: intersect with key-group ranges
	handles []keyedOld
	byOld   []int32 // old subtask → handle index, -1 when none
	sorted  bool    // handle ranges ascending and disjoint (the normal case)
}

func newKeyedDistribution(sim *operatorSim, raw bool, maxP int) *KeyedDistribution {
	found := false
	for _, st := range sim.byOld {
		if st != nil && (raw && st.RawKeyedState != nil || !raw && st.ManagedKeyedState != nil) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	k := &KeyedDistribution{Raw: raw, MaxParallelism: maxP, OldParallelism: sim.oldP, NewParallelism: sim.newP}
	d := &k.d
	d.rescale = sim.oldP != sim.newP
	d.byOld = make([]int32, sim.oldP)
	d.sorted = true
	for j, st := range sim.byOld {
		d.byOld[j] = -1
		if st == nil {
			continue
		}
		h := st.ManagedKeyedState
		if raw {
			h = st.RawKeyedState
		}
		if h == nil {
			continue
		}
		ko := keyedOld{old: j, h: h, cost: PayloadHandleOverhead + int64(len(h.Stream.Path)) + h.InlineBytes +
			PayloadHandleOverhead*int64(h.SharedFiles.Count+h.PrivateFiles.Count)}
		ko.perKG = isKeyGroupsKind(h.Kind) && h.KeyGroupBytes.Len() == h.KeyGroups.NumKeyGroups && h.KeyGroupBytes.Len() > 0
		if h.KeyGroups.NumKeyGroups <= 0 {
			d.sorted = false
		} else if n := len(d.handles); n > 0 && h.KeyGroups.Start <= d.handles[n-1].h.KeyGroups.End() {
			d.sorted = false
		}
		d.byOld[j] = int32(len(d.handles))
		d.handles = append(d.handles, ko)
		k.Bytes += h.StateSize
		k.InlineBytes += h.InlineBytes
		seen := false
		for _, kind := range k.Kinds {
			seen = seen || kind == h.Kind
		}
		if !seen {
			k.Kinds = append(k.Kinds, h.Kind)
		}
	}
	if len(d.handles) == 0 {
		return nil
	}
	return k
}

func isKeyGroupsKind(k checkpoint.KeyedHandleKind) bool {
	return k == checkpoint.KeyGroupsHandle || k == checkpoint.SavepointKeyGroupsHandle
}

// slice computes what new subtask range r gets from handle q (§2.2). ok is false when the handle
// is not assigned (empty intersection on the rescale path).
func (d *keyedDist) slice(q int, r checkpoint.KeyGroupRange, whole bool) (KeyedSlice, int64, bool) {
	ko := &d.handles[q]
	h := ko.h
	inter := IntersectKeyGroups(h.KeyGroups, r)
	s := KeyedSlice{OldSubtask: ko.old, Kind: h.Kind, InlineBytes: h.InlineBytes}
	narrow := !whole && isKeyGroupsKind(h.Kind)
	if !whole && inter.NumKeyGroups == 0 {
		return s, 0, false
	}
	owned := h.StateSize
	if h.KeyGroups.NumKeyGroups > 0 && inter.NumKeyGroups < h.KeyGroups.NumKeyGroups {
		owned = ko.bytesIn(inter)
	}
	payload := ko.cost
	if narrow {
		s.KeyGroups = inter
		s.ReadBytes = owned
		payload += 8 * int64(inter.NumKeyGroups)
	} else {
		s.Whole = true
		s.KeyGroups = h.KeyGroups
		s.ReadBytes = h.StateSize
		if isKeyGroupsKind(h.Kind) {
			payload += 8 * int64(h.KeyGroups.NumKeyGroups)
		}
	}
	s.OwnedBytes = owned
	return s, payload, true
}

// bytesIn returns the handle's bytes in the key groups of inter (a sub-range of its own range):
// exact with per-key-group sizes, proportional otherwise.
func (ko *keyedOld) bytesIn(inter checkpoint.KeyGroupRange) int64 {
	h := ko.h
	if inter.NumKeyGroups <= 0 {
		return 0
	}
	if ko.perKG {
		// Each key group is read by one new subtask on a rescale: summing is O(maxP) per operator.
		a := inter.Start - h.KeyGroups.Start
		return h.KeyGroupBytes.Sum(a, a+inter.NumKeyGroups)
	}
	if h.KeyGroups.NumKeyGroups <= 0 {
		return 0
	}
	return h.StateSize * int64(inter.NumKeyGroups) / int64(h.KeyGroups.NumKeyGroups)
}

// Share returns what new subtask i receives of the keyed state.
func (k *KeyedDistribution) Share(i int) KeyedShare {
	var sh KeyedShare
	if i < 0 || i >= k.NewParallelism {
		return sh
	}
	sh.KeyGroups = KeyGroupRangeForSubtask(k.MaxParallelism, k.NewParallelism, i)
	k.each(i, sh.KeyGroups, func(s KeyedSlice, _ int64) {
		sh.Handles = append(sh.Handles, s)
		sh.ReadBytes += s.ReadBytes
		sh.OwnedBytes += s.OwnedBytes
		sh.InlineBytes += s.InlineBytes
	})
	return sh
}

// each calls f with every handle new subtask i (range r) receives, in Flink's order, and its
// payload estimate.
func (k *KeyedDistribution) each(i int, r checkpoint.KeyGroupRange, f func(KeyedSlice, int64)) {
	d := &k.d
	if !d.rescale {
		if i < len(d.byOld) && d.byOld[i] >= 0 {
			s, p, _ := d.slice(int(d.byOld[i]), r, true)
			f(s, p)
		}
		return
	}
	lo := 0
	if d.sorted {
		lo = searchHandles(d.handles, r.Start)
	}
	for q := lo; q < len(d.handles); q++ {
		kr := d.handles[q].h.KeyGroups
		if d.sorted && kr.Start > r.End() {
			break
		}
		if s, p, ok := d.slice(q, r, false); ok {
			f(s, p)
		}
	}
}

// searchHandles returns the first handle whose range may reach key group kg.
func searchHandles(hs []keyedOld, kg int) int {
	lo, hi := 0, len(hs)
	for lo < hi {
		m := (lo + hi) / 2
		r := hs[m].h.KeyGroups
		if r.End() < kg {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// accumulate adds the keyed part of every new subtask to the operator pass and fills Summary.
func (k *KeyedDistribution) accumulate(sc *scratch) {
	sum := &k.Summary
	d := &k.d
	var ownedTotal int64
	lo := 0 // first handle that may reach the current range (sorted handles, ranges ascending)
	for i := 0; i < k.NewParallelism; i++ {
		sc.stop.Check()
		r := KeyGroupRangeForSubtask(k.MaxParallelism, k.NewParallelism, i)
		var read, owned int64
		handles := 0
		visit := func(q int, whole bool) {
			s, p, ok := d.slice(q, r, whole)
			if !ok {
				return
			}
			read += s.ReadBytes
			owned += s.OwnedBytes
			sc.acc[i].payload += p
			sc.acc[i].inline += s.InlineBytes
			handles++
		}
		switch {
		case !d.rescale:
			if i < len(d.byOld) && d.byOld[i] >= 0 {
				visit(int(d.byOld[i]), true)
			}
		case d.sorted:
			for lo < len(d.handles) && d.handles[lo].h.KeyGroups.End() < r.Start {
				lo++
			}
			for q := lo; q < len(d.handles) && d.handles[q].h.KeyGroups.Start <= r.End(); q++ {
				ko := &d.handles[q]
				if !ko.perKG {
					visit(q, false)
					continue
				}
				// Key-group handle narrowed to the intersection (the common heap/savepoint case,
				// inlined: read = owned = the intersection's bytes).
				h := ko.h
				a, b := max(h.KeyGroups.Start, r.Start), min(h.KeyGroups.End(), r.End())
				bytes := h.StateSize // the whole range: stream meta data included, as slice does
				if b-a+1 < h.KeyGroups.NumKeyGroups {
					bytes = h.KeyGroupBytes.Sum(a-h.KeyGroups.Start, b-h.KeyGroups.Start+1)
				}
				read += bytes
				owned += bytes
				sc.acc[i].payload += ko.cost + 8*int64(b-a+1)
				sc.acc[i].inline += h.InlineBytes
				handles++
			}
		default:
			for q := range d.handles {
				visit(q, false)
			}
		}
		sc.xacc[i].kread += read
		sc.xacc[i].kowned += owned
		ownedTotal += owned
		if read > sum.MaxReadBytes || i == 0 {
			sum.MaxReadBytes, sum.MaxReadSubtask = read, i
		}
		sum.MaxOwnedBytes = max(sum.MaxOwnedBytes, owned)
		sum.MaxOldSubtasksRead = max(sum.MaxOldSubtasksRead, handles)
	}
	if ownedTotal > 0 {
		sum.MeanOwnedBytes = float64(ownedTotal) / float64(k.NewParallelism)
		sum.Skew = float64(sum.MaxOwnedBytes) / sum.MeanOwnedBytes
	}
}
