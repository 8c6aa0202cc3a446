package rescale

// SplitCounts applies Flink's SPLIT_DISTRIBUTE cursor (RoundRobinOperatorStateRepartitioner,
// §1.4) to plain element counts. counts[n][j] is the number of elements name n has in old subtask
// j, with the names in Flink's iteration order (see HashMapOrder); the result out[n][i] is the
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

// SplitCountsByName is SplitCounts for names given in first-registration (insertion) order: it
// puts them in Java HashMap iteration order first, as Flink's repartitioner sees them. counts maps
// a name to its elements per old subtask; the result maps it to elements per new subtask.
func SplitCountsByName(names []string, counts map[string][]int64, newP int) map[string][]int64 {
	ordered := HashMapOrder(names)
	in := make([][]int64, len(ordered))
	for k, n := range ordered {
		in[k] = counts[n]
	}
	out := map[string][]int64{}
	for k, per := range SplitCounts(in, newP) {
		out[ordered[k]] = per
	}
	return out
}
