package rescale

import (
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// The iteration order of Java's HashMap decides which SPLIT_DISTRIBUTE name Flink's round robin
// starts with, so which new subtask gets which element (§1.4). This file reproduces
// java.util.HashMap<String, ?> of OpenJDK 8 to 25 (the same code in all of them) for the two
// operations Flink performs on this path: put (reading a handle's name map from _metadata) and
// computeIfAbsent (RoundRobinOperatorStateRepartitioner.groupByStateMode). What matters, and is
// modelled literally: put appends to a bucket's list, computeIfAbsent links at its head; put
// resizes after inserting, computeIfAbsent before its next call (present keys included); a bucket
// reaching 8 (computeIfAbsent) or 9 (put) nodes is treeified when the table has 64 buckets or
// more and doubles the table otherwise; a tree bin iterates in its linked order, in which a new
// node follows its tree parent and the red-black root is moved to the front; resizes split lists
// and trees into lo/hi halves in order, untreeifying halves of 6 or fewer and re-treeifying the
// others. The golden vectors in testdata/javahash-golden.txt.gz come from the JDK itself
// (tools/javahash). Every operation is O(1) amortised, O(log n) in a tree bin.

// JavaStringHashCode is java.lang.String.hashCode: the 31-polynomial over the UTF-16 code units,
// wrapping at 32 bits.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// javaSpread is HashMap.hash: the key's hashCode with its high half folded into the low half.
func javaSpread(h int32) int32 { return h ^ int32(uint32(h)>>16) }

// javaStringCompare has the sign of a.compareTo(b) for Java strings: UTF-16 code units in order,
// then length. It differs from Go's byte order only where a supplementary character meets one of
// U+E000..U+FFFF.
func javaStringCompare(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmpInt(len(a), len(b))
	}
	for i > 0 && (a[i]&0xC0 == 0x80 || b[i]&0xC0 == 0x80) {
		i-- // back to the start of the rune that differs
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ua, ub := firstUTF16Unit(ra), firstUTF16Unit(rb); ua != ub {
		return cmpInt(int(ua), int(ub))
	}
	return cmpInt(int(ra), int(rb)) // both supplementary with the same high surrogate
}

func firstUTF16Unit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// HashMap constants (java.util.HashMap).
const (
	jhDefaultCapacity    = 16
	jhMaxCapacity        = 1 << 30
	jhTreeifyThreshold   = 8
	jhUntreeifyThreshold = 6
	jhMinTreeifyCapacity = 64
	jhLoadFactor         = float32(0.75)
)

// jhNode is one mapping: the key's spread hash, the caller's key id, and the next node of its
// bucket (-1 at the end).
type jhNode struct {
	hash, key, next int32
}

// jhLinks are the TreeNode fields of a node; tree is false for a plain node.
type jhLinks struct {
	parent, prev int32
	kid          [2]int32 // left, right (indexed by a side: 0 or 1)
	red, tree    bool
}

// javaHashMap is the bucket structure of a java.util.HashMap with load factor 0.75 whose keys are
// distinct ids; cmp orders two keys as their Strings' compareTo (only tree bins ask). The caller
// knows whether a key is present, so the map never looks keys up.
type javaHashMap struct {
	nodes     []jhNode
	links     []jhLinks // nil until a bin is treeified, then parallel to nodes
	table     []int32   // bucket heads (-1 empty); nil before the first insertion, as in Java
	size      int
	threshold int
	cmp       func(a, b int32) int
}

// newJavaHashMap is `new HashMap<>()` (initialCapacity < 0) or `new HashMap<>(initialCapacity)`.
func newJavaHashMap(initialCapacity int, cmp func(a, b int32) int) *javaHashMap {
	m := &javaHashMap{cmp: cmp}
	if initialCapacity >= 0 {
		m.threshold = javaTableSizeFor(min(initialCapacity, jhMaxCapacity))
	}
	return m
}

// javaTableSizeFor is HashMap.tableSizeFor: the smallest power of two >= c (1 for c <= 1).
func javaTableSizeFor(c int) int {
	n := 1
	for n < c && n < jhMaxCapacity {
		n <<= 1
	}
	return n
}

// flinkExpectedSizeCapacity is Flink's CollectionUtil.computeRequiredCapacity(n, 0.75f), the
// initial capacity newHashMapWithExpectedSize(n) passes to HashMap (float division, then ceil).
func flinkExpectedSizeCapacity(n int) int {
	if n <= 2 {
		return n + 1
	}
	if n >= math.MaxInt32/2+1 {
		return math.MaxInt32
	}
	return int(math.Ceil(float64(float32(n) / jhLoadFactor)))
}

// nextTable returns the capacity and threshold HashMap.resize moves to from (capacity,
// threshold); capacity 0 is the first allocation.
func nextTable(capacity, threshold int) (int, int) {
	var newCap, newThr int
	switch {
	case capacity > 0:
		if capacity >= jhMaxCapacity {
			return capacity, math.MaxInt32
		}
		newCap = capacity << 1
		if newCap < jhMaxCapacity && capacity >= jhDefaultCapacity {
			newThr = threshold << 1
		}
	case threshold > 0: // initial capacity placed in threshold
		newCap = threshold
	default:
		newCap, newThr = jhDefaultCapacity, int(jhLoadFactor*jhDefaultCapacity)
	}
	if newThr == 0 {
		ft := float32(newCap) * jhLoadFactor
		if newCap < jhMaxCapacity && ft < float32(jhMaxCapacity) {
			newThr = int(ft)
		} else {
			newThr = math.MaxInt32
		}
	}
	return newCap, newThr
}

func (m *javaHashMap) isTree(n int32) bool { return m.links != nil && m.links[n].tree }

func (m *javaHashMap) newNode(hash, key, next int32) int32 {
	m.nodes = append(m.nodes, jhNode{hash: hash, key: key, next: next})
	if m.links != nil {
		m.links = append(m.links, jhLinks{parent: -1, kid: [2]int32{-1, -1}, prev: -1})
	}
	return int32(len(m.nodes) - 1)
}

// put is HashMap.put for a key that is absent (putVal).
func (m *javaHashMap) put(key, hash int32) {
	if len(m.table) == 0 {
		m.resize()
	}
	i := int(hash) & (len(m.table) - 1)
	p := m.table[i]
	switch {
	case p < 0:
		m.table[i] = m.newNode(hash, key, -1)
	case m.isTree(p):
		m.putTreeVal(p, hash, key)
	default:
		binCount := 0
		for m.nodes[p].next >= 0 {
			p = m.nodes[p].next
			binCount++
		}
		x := m.newNode(hash, key, -1)
		m.nodes[p].next = x
		if binCount >= jhTreeifyThreshold-1 {
			m.treeifyBin(hash)
		}
	}
	m.size++
	if m.size > m.threshold {
		m.resize()
	}
}

// computeIfAbsent is HashMap.computeIfAbsent with a function that returns a non-null value;
// present says the key is already mapped (to a non-null value), when the call only resizes a
// table that an earlier insertion left over its threshold.
func (m *javaHashMap) computeIfAbsent(key, hash int32, present bool) {
	if m.size > m.threshold || len(m.table) == 0 {
		m.resize()
	}
	if present {
		return
	}
	i := int(hash) & (len(m.table) - 1)
	first := m.table[i]
	if first >= 0 && m.isTree(first) {
		m.putTreeVal(first, hash, key)
	} else {
		binCount := 0
		for e := first; e >= 0; e = m.nodes[e].next {
			binCount++
		}
		m.table[i] = m.newNode(hash, key, first)
		if binCount >= jhTreeifyThreshold-1 {
			m.treeifyBin(hash)
		}
	}
	m.size++
}

// keys appends the keys in iteration order to out.
func (m *javaHashMap) keys(out []int32) []int32 {
	for _, e := range m.table {
		for ; e >= 0; e = m.nodes[e].next {
			out = append(out, m.nodes[e].key)
		}
	}
	return out
}

func (m *javaHashMap) resize() {
	oldTab := m.table
	newCap, newThr := nextTable(len(oldTab), m.threshold)
	m.threshold = newThr
	if newCap == len(oldTab) {
		return
	}
	tab := make([]int32, newCap)
	for j := range tab {
		tab[j] = -1
	}
	m.table = tab
	oldCap := int32(len(oldTab))
	for j, e := range oldTab {
		switch {
		case e < 0:
		case m.nodes[e].next < 0:
			tab[int(m.nodes[e].hash)&(newCap-1)] = e
		case m.isTree(e):
			m.split(tab, int32(j), e, oldCap)
		default: // preserve order
			loHead, loTail, hiHead, hiTail := int32(-1), int32(-1), int32(-1), int32(-1)
			for e >= 0 {
				next := m.nodes[e].next
				if m.nodes[e].hash&oldCap == 0 {
					if loTail < 0 {
						loHead = e
					} else {
						m.nodes[loTail].next = e
					}
					loTail = e
				} else {
					if hiTail < 0 {
						hiHead = e
					} else {
						m.nodes[hiTail].next = e
					}
					hiTail = e
				}
				e = next
			}
			if loTail >= 0 {
				m.nodes[loTail].next = -1
				tab[j] = loHead
			}
			if hiTail >= 0 {
				m.nodes[hiTail].next = -1
				tab[int32(j)+oldCap] = hiHead
			}
		}
	}
}

// treeifyBin turns the bin of hash into a tree, or doubles a table of fewer than 64 buckets.
func (m *javaHashMap) treeifyBin(hash int32) {
	n := len(m.table)
	if n < jhMinTreeifyCapacity {
		m.resize()
		return
	}
	index := int(hash) & (n - 1)
	hd := m.table[index]
	if hd < 0 {
		return
	}
	if m.links == nil {
		m.links = make([]jhLinks, len(m.nodes), cap(m.nodes))
	}
	prev := int32(-1)
	for e := hd; e >= 0; e = m.nodes[e].next {
		m.links[e] = jhLinks{parent: -1, kid: [2]int32{-1, -1}, prev: prev, tree: true}
		prev = e
	}
	m.treeify(hd, m.table)
}

// side is the side of p's subtree that x goes down: left (0) unless it orders after p.
func (m *javaHashMap) side(x, p int32) int {
	if m.compareNodes(x, p) <= 0 {
		return 0
	}
	return 1
}

// compareNodes orders two tree nodes: by hash (signed), then by the keys' compareTo. Map keys are
// distinct strings, so compareTo never ties and tieBreakOrder is never needed.
func (m *javaHashMap) compareNodes(x, p int32) int {
	h, ph := m.nodes[x].hash, m.nodes[p].hash
	switch {
	case ph > h:
		return -1
	case ph < h:
		return 1
	}
	if d := m.cmp(m.nodes[x].key, m.nodes[p].key); d != 0 {
		return d
	}
	return -1
}

// treeify (TreeNode.treeify) builds a red-black tree from the linked bin starting at head, in
// linked order, then moves the root to the front of the bin.
func (m *javaHashMap) treeify(head int32, tab []int32) {
	root := int32(-1)
	for x := head; x >= 0; {
		next := m.nodes[x].next
		lx := &m.links[x]
		lx.kid = [2]int32{-1, -1}
		if root < 0 {
			lx.parent, lx.red = -1, false
			root = x
		} else {
			for p := root; ; {
				side := m.side(x, p)
				xp := p
				p = m.links[p].kid[side]
				if p < 0 {
					m.links[x].parent = xp
					m.links[xp].kid[side] = x
					root = m.balanceInsertion(root, x)
					break
				}
			}
		}
		x = next
	}
	m.moveRootToFront(tab, root)
}

// untreeify turns the linked nodes starting at head back into plain nodes, in order.
func (m *javaHashMap) untreeify(head int32) int32 {
	for q := head; q >= 0; q = m.nodes[q].next {
		m.links[q].tree = false
	}
	return head
}

// putTreeVal adds an absent key to the tree bin whose first node is first: the new node is linked
// right after its tree parent.
func (m *javaHashMap) putTreeVal(first, hash, key int32) {
	root := first
	if m.links[first].parent >= 0 {
		root = m.root(first)
	}
	x := m.newNode(hash, key, -1)
	for p := root; ; {
		side := m.side(x, p)
		xp := p
		p = m.links[p].kid[side]
		if p < 0 {
			xpn := m.nodes[xp].next
			m.nodes[x].next = xpn
			m.links[x] = jhLinks{parent: xp, kid: [2]int32{-1, -1}, prev: xp, tree: true}
			m.links[xp].kid[side] = x
			m.nodes[xp].next = x
			if xpn >= 0 {
				m.links[xpn].prev = x
			}
			m.moveRootToFront(m.table, m.balanceInsertion(root, x))
			return
		}
	}
}

func (m *javaHashMap) root(x int32) int32 {
	for m.links[x].parent >= 0 {
		x = m.links[x].parent
	}
	return x
}

// moveRootToFront makes root the first node of its bin, keeping the others in order.
func (m *javaHashMap) moveRootToFront(tab []int32, root int32) {
	if root < 0 || len(tab) == 0 {
		return
	}
	index := int(m.nodes[root].hash) & (len(tab) - 1)
	first := tab[index]
	if root == first {
		return
	}
	tab[index] = root
	rp := m.links[root].prev
	if rn := m.nodes[root].next; rn >= 0 {
		m.links[rn].prev = rp
	}
	if rp >= 0 {
		m.nodes[rp].next = m.nodes[root].next
	}
	if first >= 0 {
		m.links[first].prev = root
	}
	m.nodes[root].next = first
	m.links[root].prev = -1
}

// split (TreeNode.split) divides the tree bin b of old bucket index between index and
// index+bit of tab during a resize.
func (m *javaHashMap) split(tab []int32, index, b, bit int32) {
	head, tail := [2]int32{-1, -1}, [2]int32{-1, -1} // of the low (0) and high (1) halves
	var count [2]int
	for e := b; e >= 0; {
		next := m.nodes[e].next
		m.nodes[e].next = -1
		h := 0
		if m.nodes[e].hash&bit != 0 {
			h = 1
		}
		if m.links[e].prev = tail[h]; tail[h] < 0 {
			head[h] = e
		} else {
			m.nodes[tail[h]].next = e
		}
		tail[h] = e
		count[h]++
		e = next
	}
	for h, at := range [2]int32{index, index + bit} {
		switch {
		case head[h] < 0:
		case count[h] <= jhUntreeifyThreshold:
			tab[at] = m.untreeify(head[h])
		default:
			tab[at] = head[h]
			if head[1-h] >= 0 { // else the tree is intact
				m.treeify(head[h], tab)
			}
		}
	}
}

// rotate is rotateLeft (d = 0) or rotateRight (d = 1) of HashMap.TreeNode: p's child on the
// other side takes p's place and p becomes its child on side d. It returns the root.
func (m *javaHashMap) rotate(root, p int32, d int) int32 {
	if p < 0 {
		return root
	}
	r := m.links[p].kid[1-d]
	if r < 0 {
		return root
	}
	rl := m.links[r].kid[d]
	m.links[p].kid[1-d] = rl
	if rl >= 0 {
		m.links[rl].parent = p
	}
	pp := m.links[p].parent
	m.links[r].parent = pp
	switch {
	case pp < 0:
		root = r
		m.links[r].red = false
	case m.links[pp].kid[0] == p:
		m.links[pp].kid[0] = r
	default:
		m.links[pp].kid[1] = r
	}
	m.links[r].kid[d] = p
	m.links[p].parent = r
	return root
}

// balanceInsertion is the red-black fix-up after inserting x (CLR, as HashMap.TreeNode does it);
// it returns the root.
func (m *javaHashMap) balanceInsertion(root, x int32) int32 {
	L := m.links
	L[x].red = true
	for {
		xp := L[x].parent
		if xp < 0 {
			L[x].red = false
			return x
		}
		xpp := L[xp].parent
		if !L[xp].red || xpp < 0 {
			return root
		}
		s := 0 // the side of xpp that xp is on
		if L[xpp].kid[0] != xp {
			s = 1
		}
		if uncle := L[xpp].kid[1-s]; uncle >= 0 && L[uncle].red {
			L[uncle].red, L[xp].red, L[xpp].red = false, false, true
			x = xpp
			continue
		}
		if x == L[xp].kid[1-s] {
			x = xp
			root = m.rotate(root, x, s)
			if xp = L[x].parent; xp < 0 {
				xpp = -1
			} else {
				xpp = L[xp].parent
			}
		}
		if xp >= 0 {
			L[xp].red = false
			if xpp >= 0 {
				L[xpp].red = true
				root = m.rotate(root, xpp, 1-s)
			}
		}
	}
}

// HashMapOrder returns the distinct names, given in insertion order, in the iteration order of a
// java.util.HashMap<String, ?> created with `new HashMap<>()` and filled with put (the operator
// state backend's registry of states, whose order a snapshot writes). Duplicates keep their
// first position.
func HashMapOrder(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]struct{}, len(names))
	for _, n := range names {
		if _, ok := seen[n]; !ok {
			seen[n] = struct{}{}
			out = append(out, n)
		}
	}
	m := newJavaHashMap(-1, func(a, b int32) int { return javaStringCompare(out[a], out[b]) })
	for k, n := range out {
		m.put(int32(k), javaSpread(JavaStringHashCode(n)))
	}
	sorted := make([]string, 0, len(out))
	for _, k := range m.keys(make([]int32, 0, len(out))) {
		sorted = append(sorted, out[k])
	}
	return sorted
}

// HandleMapSizing is how Flink sizes the HashMap it reads an operator state handle's name map
// into (MetadataV2V3SerializerBase.deserializeOperatorStateHandle). The map's iteration order is
// the order in which the repartitioner meets the handle's names.
type HandleMapSizing uint8

const (
	// HandleMapExpectedSize is CollectionUtil.newHashMapWithExpectedSize(n), Flink 1.18 and
	// later (FLINK-32410).
	HandleMapExpectedSize HandleMapSizing = iota
	// HandleMapCapacityN is new HashMap<>(n), Flink 1.17 and earlier.
	HandleMapCapacityN
)

// initialCapacity is the capacity the handle map of n names is created with.
func (s HandleMapSizing) initialCapacity(n int) int {
	if s == HandleMapCapacityN {
		return n
	}
	return flinkExpectedSizeCapacity(n)
}

// nameGrouping replays, for one operator's managed or raw list, the calls that
// RoundRobinOperatorStateRepartitioner.groupByStateMode makes: for every old subtask in order,
// the handle's name map is read from _metadata (put in file order, sized by HandleMapSizing)
// and iterated, and each name goes through computeIfAbsent on the default-sized HashMap of its
// mode. Keys are the caller's ids of (mode, name); hashes and names are looked up through ids.
type nameGrouping struct {
	sizing HandleMapSizing
	name   func(id int32) string
	hash   func(id int32) int32 // spread hash of the name
	modes  [3]*javaHashMap
	// The previous handle's ids in file order and their iteration order (nil: file order), reused
	// when the next handle lists the same names in the same order, as Flink's handles usually do.
	prevIDs, prevPerm []int32
	perm              []int32
}

func newNameGrouping(sizing HandleMapSizing, name func(int32) string, hash func(int32) int32) *nameGrouping {
	return &nameGrouping{sizing: sizing, name: name, hash: hash}
}

// addHandle replays one handle: ids are its distinct keys in file order, modes their modes, and
// fresh[k] says ids[k] appears here for the first time in the operator.
func (g *nameGrouping) addHandle(ids []int32, modes []checkpoint.DistributionMode, fresh []bool) {
	perm := g.handleOrder(ids)
	for x := range ids {
		k := x
		if perm != nil {
			k = int(perm[x])
		}
		md := modes[k]
		m := g.modes[md]
		if m == nil {
			m = newJavaHashMap(-1, func(a, b int32) int { return javaStringCompare(g.name(a), g.name(b)) })
			// Its nodes sized for the handle's names of the mode (usually all the operator's):
			// grown by appending, they would leave as much again as garbage.
			m.nodes = make([]jhNode, 0, countMode(modes, md))
			g.modes[md] = m
		}
		m.computeIfAbsent(ids[k], g.hash(ids[k]), !fresh[k])
	}
}

// countMode returns how many of modes are md.
func countMode(modes []checkpoint.DistributionMode, md checkpoint.DistributionMode) int {
	n := 0
	for _, x := range modes {
		if x == md {
			n++
		}
	}
	return n
}

// order returns the keys of one mode in Flink's iteration order.
func (g *nameGrouping) order(mode checkpoint.DistributionMode) []int32 {
	if m := g.modes[mode]; m != nil {
		return m.keys(make([]int32, 0, m.size))
	}
	return nil
}

// handleOrder returns the iteration order of a handle's name map as positions into ids, or nil
// when it is the file order.
func (g *nameGrouping) handleOrder(ids []int32) []int32 {
	if len(ids) == len(g.prevIDs) {
		same := true
		for k, id := range ids {
			if g.prevIDs[k] != id {
				same = false
				break
			}
		}
		if same {
			return g.prevPerm
		}
	}
	g.prevIDs = append(g.prevIDs[:0], ids...)
	g.prevPerm = nil
	if len(ids) < 2 || g.fileOrderIsIterationOrder(ids) {
		return nil
	}
	m := newJavaHashMap(g.sizing.initialCapacity(len(ids)), func(a, b int32) int { return javaStringCompare(g.name(ids[a]), g.name(ids[b])) })
	m.nodes = make([]jhNode, 0, len(ids))
	for k, id := range ids {
		m.put(int32(k), g.hash(id))
	}
	g.perm = m.keys(g.perm[:0])
	g.prevPerm = g.perm
	return g.perm
}

// fileOrderIsIterationOrder reports, without building the map, that putting ids in file order
// leaves them in file order: no bin ever reaches the treeify threshold (bins at the first table
// size hold at most 8 names) and the names are sorted by bucket at the final table size (a
// snapshot written by Flink from a map of that size always is).
func (g *nameGrouping) fileOrderIsIterationOrder(ids []int32) bool {
	n := len(ids)
	capacity, threshold := nextTable(0, javaTableSizeFor(min(g.sizing.initialCapacity(n), jhMaxCapacity)))
	first := capacity
	for n > threshold && capacity < jhMaxCapacity {
		capacity, threshold = nextTable(capacity, threshold)
	}
	mask := int32(capacity - 1)
	prev, run, maxRun := int32(-1), 0, 0
	for _, id := range ids {
		b := g.hash(id) & mask
		switch {
		case b < prev:
			return false
		case b == prev:
			run++
		default:
			run = 1
		}
		prev, maxRun = b, max(maxRun, run)
	}
	// A bin at the first size gathers capacity/first bins of the final size.
	return maxRun*(capacity/first) <= jhTreeifyThreshold
}
