package rescale

// MapSubtasks is SubtaskStateMapper.getNewToOldSubtasksMapping: for each new subtask, the old
// subtasks whose channel state it receives, ascending. MapperUnspecified and MapperUnsupported
// return nil.
func MapSubtasks(m SubtaskMapper, oldP, newP int) [][]int {
	if oldP <= 0 || newP <= 0 {
		return nil
	}
	out := make([][]int, newP)
	switch m {
	case MapperFirst:
		out[0] = seq(0, oldP)
	case MapperFull:
		all := seq(0, oldP)
		for i := range out {
			out[i] = all
		}
	case MapperRange:
		for i := range out {
			r := KeyGroupRangeForSubtask(UpperBoundMaxParallelism, newP, i)
			lo := OperatorIndexForKeyGroup(UpperBoundMaxParallelism, oldP, r.Start)
			hi := OperatorIndexForKeyGroup(UpperBoundMaxParallelism, oldP, r.End())
			out[i] = seq(lo, hi+1)
		}
	case MapperRoundRobin, MapperArbitrary:
		for i := range out {
			for j := i; j < oldP; j += newP {
				out[i] = append(out[i], j)
			}
		}
	default:
		return nil
	}
	for i := range out {
		if out[i] == nil {
			out[i] = []int{}
		}
	}
	return out
}

func seq(from, to int) []int {
	s := make([]int, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}
