package rescale

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// SplitCounts applies Flink's SPLIT_DISTRIBUTE cursor (RoundRobinOperatorStateRepartitioner,
// §1.4) to plain element counts. counts[n][j] is the number of elements name n has in old subtask
// j, with the names in Flink's iteration order (see SplitCountsByName); the result out[n][i] is the
// number of elements new subtask i receives. The remainder rotates across names: each name starts
// at the first subtask that did not get an extra element of the previous one. This is the rescale
// path; with equal old and new parallelism Flink keeps the old assignment instead.
func SplitCounts(counts [][]int64, newP int) [][]int64 {
	if newP <= 0 {
		return nil
	}
	out := make([][]int64, len(counts))
	n := int64(newP)
	var start int64
	for k, perOld := range counts {
		var total int64
		for _, c := range perOld {
			total += c
		}
		base, rem := total/n, total%n
		out[k] = make([]int64, newP)
		for run := int64(0); run < n; run++ {
			c := base
			if run < rem {
				c++
			}
			out[k][(start+run)%n] = c
		}
		start = (start + rem) % n
	}
	return out
}

// SplitCountsByName is SplitCounts for names as every old subtask's handle lists them in
// _metadata (file order): it puts them in the order Flink's repartitioner iterates them (see
// nameGrouping), with handles read as Flink 1.18+ reads them. counts maps a name to its elements
// per old subtask; the result maps it to elements per new subtask.
func SplitCountsByName(names []string, counts map[string][]int64, newP int) map[string][]int64 {
	distinct := make([]string, 0, len(names))
	index := make(map[string]int32, len(names))
	oldP := 1
	for _, n := range names {
		if _, ok := index[n]; !ok {
			index[n] = int32(len(distinct))
			distinct = append(distinct, n)
			oldP = max(oldP, len(counts[n]))
		}
	}
	hashes := make([]int32, len(distinct))
	ids := make([]int32, len(distinct))
	modes := make([]checkpoint.DistributionMode, len(distinct))
	fresh := make([]bool, len(distinct))
	for k, n := range distinct {
		hashes[k], ids[k] = javaSpread(JavaStringHashCode(n)), int32(k)
	}
	g := newNameGrouping(HandleMapExpectedSize, func(id int32) string { return distinct[id] },
		func(id int32) int32 { return hashes[id] })
	for j := range oldP {
		for k := range fresh {
			fresh[k] = j == 0
		}
		g.addHandle(ids, modes, fresh)
	}
	order := g.order(checkpoint.SplitDistribute)
	in := make([][]int64, len(order))
	for k, id := range order {
		in[k] = counts[distinct[id]]
	}
	out := map[string][]int64{}
	for k, per := range SplitCounts(in, newP) {
		out[distinct[order[k]]] = per
	}
	return out
}
