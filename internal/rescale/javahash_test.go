package rescale

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math/bits"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// The name sets and scenarios of tools/javahash/JavaHashOrder.java, generated the same way, so
// that the model's orders can be compared with the JDK's (testdata/javahash-golden.txt.gz).

const (
	goldenSets = 10240
	goldenPath = "testdata/javahash-golden.txt.gz"
)

var (
	goldenBig        = []int{1000, 5000, 10000, 12289, 20000, 24577, 49153, 50000, 98305, 100000}
	goldenASCII      = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."
	goldenNonASCII   = []rune{0xE9, 0xDF, 0x3A9, 0x4E2D, 0xE000, 0xFF21, 0x1F600, 0x10348}
	goldenThresholds = []int{6, 7, 8, 9, 12, 13, 24, 25, 48, 49, 96, 97, 192, 193, 384, 385, 768, 769}
	goldenFlinkNames = []string{"SourceReaderState", "topic-partition-offset-states", "expired-files", "writer_raw_states",
		"pending-committables", "bucket-states", "max-parallelism", "state", "buffer", "offsets"}
)

// splitMix is SplitMix64, the generator of the Java program.
type splitMix struct{ s uint64 }

func (r *splitMix) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *splitMix) intn(bound int) int { return int(r.next() % uint64(bound)) }

func goldenChars(r *splitMix, n int) string {
	var b strings.Builder
	for range n {
		if r.intn(16) == 0 {
			b.WriteRune(goldenNonASCII[r.intn(len(goldenNonASCII))])
		} else {
			b.WriteByte(goldenASCII[r.intn(len(goldenASCII))])
		}
	}
	return b.String()
}

func goldenShuffle(r *splitMix, l []string) {
	for i := len(l) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		l[i], l[j] = l[j], l[i]
	}
}

func equalHashFamily(r *splitMix, k int) []string {
	prefix := goldenChars(r, r.intn(4))
	suffix := goldenChars(r, r.intn(3))
	out := make([]string, 0, 1<<k)
	for m := 0; m < 1<<k; m++ {
		var b strings.Builder
		b.WriteString(prefix)
		for bit := 0; bit < k; bit++ {
			if m>>bit&1 == 1 {
				b.WriteString("BB")
			} else {
				b.WriteString("Aa")
			}
		}
		b.WriteString(suffix)
		out = append(out, b.String())
	}
	goldenShuffle(r, out)
	return out
}

func lowBitFamily(r *splitMix, mask int32, n int) []string {
	target := int32(r.intn(int(mask) + 1))
	counter := r.intn(1000000)
	var out []string
	for len(out) < n {
		s := "c" + strconv.Itoa(counter)
		counter++
		if javaSpread(JavaStringHashCode(s))&mask == target {
			out = append(out, s)
		}
	}
	return out
}

func distinctRandom(r *splitMix, n int) []string {
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		s := goldenChars(r, 1+r.intn(12))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func dedupe(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// goldenNameSet is JavaHashOrder.nameSet.
func goldenNameSet(id int) []string {
	r := &splitMix{s: 0x5EED0000 + uint64(id)}
	if id >= goldenSets {
		return distinctRandom(r, goldenBig[id-goldenSets])
	}
	var l []string
	switch id % 8 {
	case 0:
		return distinctRandom(r, 1+r.intn(40))
	case 1:
		return distinctRandom(r, max(1, goldenThresholds[r.intn(len(goldenThresholds))]+r.intn(3)-1))
	case 2:
		f := equalHashFamily(r, 3+r.intn(5))
		return f[:1+r.intn(len(f))]
	case 3:
		masks := []int32{15, 31, 63, 127}
		l = append(l, lowBitFamily(r, masks[r.intn(4)], 7+r.intn(14))...)
		l = append(l, distinctRandom(r, r.intn(200))...)
	case 4:
		families := 2 + r.intn(4)
		for range families {
			fam := equalHashFamily(r, 3+r.intn(2))
			l = append(l, fam[:min(len(fam), 6+r.intn(7))]...)
		}
		l = append(l, distinctRandom(r, r.intn(300))...)
	case 5:
		return distinctRandom(r, 100+r.intn(500))
	case 6:
		n := 1 + r.intn(64)
		for range n {
			base := goldenFlinkNames[r.intn(len(goldenFlinkNames))]
			if r.intn(3) == 0 {
				l = append(l, base)
			} else {
				l = append(l, base+"-"+strconv.Itoa(r.intn(100)))
			}
		}
		return dedupe(l)
	default:
		l = append(l, lowBitFamily(r, 63, 8+r.intn(33))...)
		l = append(l, distinctRandom(r, 32+r.intn(369))...)
	}
	out := dedupe(l)
	goldenShuffle(r, out)
	return out
}

// modelPutOrder fills a javaHashMap with put (initialCapacity < 0: the default constructor).
func modelPutOrder(names []string, initialCapacity int) []string {
	m := newJavaHashMap(initialCapacity, func(a, b int32) int { return javaStringCompare(names[a], names[b]) })
	for k, n := range names {
		m.put(int32(k), javaSpread(JavaStringHashCode(n)))
	}
	var out []string
	for _, k := range m.keys(nil) {
		out = append(out, names[k])
	}
	return out
}

// modelGrouping is scenario F/G through nameGrouping, as operator.go drives it.
func modelGrouping(handles [][]string, sizing HandleMapSizing) []string {
	var names []string
	index := map[string]int32{}
	var hashes []int32
	g := newNameGrouping(sizing, func(id int32) string { return names[id] }, func(id int32) int32 { return hashes[id] })
	for _, h := range handles {
		var ids []int32
		var modes []checkpoint.DistributionMode
		var fresh []bool
		for _, n := range h {
			id, ok := index[n]
			if !ok {
				id = int32(len(names))
				index[n] = id
				names = append(names, n)
				hashes = append(hashes, javaSpread(JavaStringHashCode(n)))
			}
			ids, modes, fresh = append(ids, id), append(modes, checkpoint.SplitDistribute), append(fresh, !ok)
		}
		g.addHandle(ids, modes, fresh)
	}
	var out []string
	for _, id := range g.order(checkpoint.SplitDistribute) {
		out = append(out, names[id])
	}
	return out
}

func goldenHandles(id int, names []string) [][]string {
	h := 1 + id%3
	var out [][]string
	for j := range h {
		var l []string
		for i, n := range names {
			if h == 1 || (i+j)%5 != 0 {
				l = append(l, n)
			}
		}
		out = append(out, l)
	}
	return out
}

// modelScenarios is JavaHashOrder.scenarios on the model.
func modelScenarios(id int, s []string) [][]string {
	out := [][]string{
		modelPutOrder(s, -1),
		modelPutOrder(s, len(s)),
		modelPutOrder(s, flinkExpectedSizeCapacity(len(s))),
	}
	m := newJavaHashMap(-1, func(a, b int32) int { return javaStringCompare(s[a], s[b]) })
	for k, n := range s {
		m.computeIfAbsent(int32(k), javaSpread(JavaStringHashCode(n)), false)
	}
	d := func() []string {
		var o []string
		for _, k := range m.keys(nil) {
			o = append(o, s[k])
		}
		return o
	}
	out = append(out, d())
	m.computeIfAbsent(0, javaSpread(JavaStringHashCode(s[0])), true)
	out = append(out, d(),
		modelGrouping(goldenHandles(id, s), HandleMapExpectedSize),
		modelGrouping(goldenHandles(id, s), HandleMapCapacityN))
	return out
}

const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

func hashOrders(orders [][]string) uint64 {
	h := uint64(fnvOffset)
	for k, o := range orders {
		h = (h ^ uint64('A'+k)) * fnvPrime
		for _, s := range o {
			for i := 0; i < len(s); i++ {
				h = (h ^ uint64(s[i])) * fnvPrime
			}
			h = (h ^ '\n') * fnvPrime
		}
	}
	return h
}

func compareVectors() uint64 {
	r := &splitMix{s: 0xC0FFEE}
	h := uint64(fnvOffset)
	for range 20000 {
		p := goldenChars(r, r.intn(3))
		a := p + goldenChars(r, r.intn(4))
		b := p + goldenChars(r, r.intn(4))
		h = (h ^ uint64(byte(int8(javaStringCompare(a, b))))) * fnvPrime
	}
	return h
}

// readGolden returns the golden lines: "compare" → hash, and per set id its size and hash.
func readGolden(t *testing.T) (compare uint64, sizes map[int]int, hashes map[int]uint64) {
	t.Helper()
	f, err := os.Open(goldenPath)
	if err != nil {
		t.Fatalf("golden vectors: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", goldenPath, err)
	}
	sizes, hashes = map[int]int{}, map[int]uint64{}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Fields(line)
		if fields[0] == "compare" && len(fields) == 2 {
			if compare, err = strconv.ParseUint(fields[1], 16, 64); err != nil {
				t.Fatalf("%s: %q: %v", goldenPath, line, err)
			}
			continue
		}
		if len(fields) != 3 {
			t.Fatalf("%s: malformed line %q", goldenPath, line)
		}
		id, err1 := strconv.Atoi(fields[0])
		n, err2 := strconv.Atoi(fields[1])
		h, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: malformed line %q", goldenPath, line)
		}
		sizes[id], hashes[id] = n, h
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", goldenPath, err)
	}
	return compare, sizes, hashes
}

// TestJavaHashMapGolden compares the model with the JDK's iteration orders on every name set of
// the golden file (10,250 sets, 1 to 100,000 names: equal hashCodes that treeify, names sharing
// low bits that split trees on resize, sizes around every resize threshold).
func TestJavaHashMapGolden(t *testing.T) {
	compare, sizes, hashes := readGolden(t)
	if len(hashes) != goldenSets+len(goldenBig) {
		t.Fatalf("%s has %d sets, want %d", goldenPath, len(hashes), goldenSets+len(goldenBig))
	}
	if got := compareVectors(); got != compare {
		t.Errorf("String.compareTo signs: hash %016x, JDK %016x", got, compare)
	}
	var names, mismatches int
	for id := 0; id < goldenSets+len(goldenBig); id++ {
		if (testing.Short() || javahashRace) && (id >= goldenSets || javahashRace && id%3 != 0) {
			continue // make javahash-golden checks them all
		}
		s := goldenNameSet(id)
		if len(s) != sizes[id] {
			t.Fatalf("set %d: generated %d names, the Java program %d: the generators differ", id, len(s), sizes[id])
		}
		names += len(s)
		orders := modelScenarios(id, s)
		if got := hashOrders(orders); got != hashes[id] {
			mismatches++
			if mismatches <= 5 {
				var b strings.Builder
				for k, o := range orders {
					if len(s) <= 64 {
						fmt.Fprintf(&b, "\n%c %s", 'A'+k, strings.Join(o, " "))
					}
				}
				t.Errorf("set %d (%d names): model %016x, JDK %016x; compare with `java -cp DIR JavaHashOrder dump %d`:%s",
					id, len(s), got, hashes[id], id, b.String())
			}
		}
	}
	if mismatches > 0 {
		t.Fatalf("%d of %d name sets differ from the JDK", mismatches, len(hashes))
	}
	t.Logf("%d name sets, %d names, 7 scenarios each: all equal to the JDK's orders", len(hashes), names)
}

// TestJavaHashMapTreeBins checks the model's invariants where trees are involved: every bin
// that holds a tree has its root first, and iteration visits every key once.
func TestJavaHashMapTreeBins(t *testing.T) {
	for _, id := range []int{2, 10, 12, 18, 20, 23, 31} {
		s := goldenNameSet(id)
		m := newJavaHashMap(-1, func(a, b int32) int { return javaStringCompare(s[a], s[b]) })
		for k, n := range s {
			m.computeIfAbsent(int32(k), javaSpread(JavaStringHashCode(n)), false)
		}
		keys := m.keys(nil)
		if len(keys) != len(s) {
			t.Fatalf("set %d: %d keys iterated, %d inserted", id, len(keys), len(s))
		}
		seen := make([]bool, len(s))
		for _, k := range keys {
			if seen[k] {
				t.Fatalf("set %d: key %d twice", id, k)
			}
			seen[k] = true
		}
		for b, e := range m.table {
			if e >= 0 && m.isTree(e) && m.links[e].parent >= 0 {
				t.Fatalf("set %d: bin %d starts with a non-root tree node", id, b)
			}
		}
	}
}

func TestJavaStringCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"ab", "a", 1}, {"", "", 0}, {"é", "e", 1},
		// U+E000 is one code unit 0xE000; U+1F600 starts with the surrogate 0xD83D: Java puts the
		// emoji first, Go's byte order the other way round.
		{"\uE000", "\U0001F600", 1}, {"x\U0001F600", "x\uFF21", -1}, {"\U0001F600", "\U00010348", 1},
	} {
		if got := javaStringCompare(tc.a, tc.b); got != tc.want {
			t.Errorf("compare(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFlinkExpectedSizeCapacity(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 2, 2: 3, 3: 4, 4: 6, 12: 16, 13: 18, 100: 134, 1 << 20: 1398102} {
		if got := flinkExpectedSizeCapacity(n); got != want {
			t.Errorf("computeRequiredCapacity(%d) = %d, want %d", n, got, want)
		}
	}
	if bits.OnesCount(uint(javaTableSizeFor(1398102))) != 1 || javaTableSizeFor(1398102) != 1<<21 {
		t.Errorf("tableSizeFor(1398102) = %d", javaTableSizeFor(1398102))
	}
}

// TestHandleOrderFastPath: names already in iteration order skip building the map, and the
// answer is the same as building it.
func TestHandleOrderFastPath(t *testing.T) {
	for id := 0; id < 400; id++ {
		s := goldenNameSet(id)
		for _, sizing := range []HandleMapSizing{HandleMapExpectedSize, HandleMapCapacityN} {
			ordered := modelPutOrder(s, sizing.initialCapacity(len(s)))
			// Putting the iteration order again must reproduce it (as when Flink reads a
			// handle it wrote itself); the fast path must agree with a full build.
			again := modelPutOrder(ordered, sizing.initialCapacity(len(ordered)))
			g := newNameGrouping(sizing, func(id int32) string { return ordered[id] },
				func(id int32) int32 { return javaSpread(JavaStringHashCode(ordered[id])) })
			ids := make([]int32, len(ordered))
			for k := range ids {
				ids[k] = int32(k)
			}
			fast := g.fileOrderIsIterationOrder(ids)
			if fast && !reflect.DeepEqual(again, ordered) {
				t.Fatalf("set %d sizing %d: fast path taken but the map reorders the names", id, sizing)
			}
		}
	}
}

// BenchmarkGroupingEqualHashes: names that all share one hashCode (one tree bin), through the
// handle map and groupByStateMode's map: O(n log n), not quadratic.
func BenchmarkGroupingEqualHashes(b *testing.B) {
	for _, k := range []int{13, 16, 17} { // 8,192, 65,536 and 131,072 names
		names := equalHashFamily(&splitMix{s: uint64(k)}, k)
		b.Run("names="+strconv.Itoa(len(names)), func(b *testing.B) {
			for b.Loop() {
				modelGrouping([][]string{names, names}, HandleMapExpectedSize)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(names)), "ns/name")
		})
	}
}
