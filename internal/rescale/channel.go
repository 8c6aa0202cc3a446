package rescale

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// channelOld is one old subtask's channel state (input channels or result subpartitions).
type channelOld struct {
	bytes, inline int64
	handles       int
	files         int   // handles on file streams
	cost          int64 // payload: per handle overhead + path + inline bytes
}

func newChannelDistribution(sim *operatorSim, input bool) *ChannelDistribution {
	if !hasChannelState(sim.layout, input) {
		return nil
	}
	c := &ChannelDistribution{Input: input}
	c.perOld = make([]channelOld, sim.oldP)
	for j, st := range sim.byOld {
		if st == nil {
			continue
		}
		list := st.OutputChannels()
		if input {
			list = st.InputChannels()
		}
		for _, ch := range list {
			o := &c.perOld[j]
			o.bytes += ch.Size
			o.handles++
			o.cost += PayloadHandleOverhead + int64(len(ch.Stream.Path))
			if ch.Stream.Inline() {
				o.inline += ch.Stream.Size
				o.cost += ch.Stream.Size
			} else if ch.Stream.Kind != checkpoint.StreamNone {
				o.files++
			}
			c.Bytes += ch.Size
			c.Handles++
		}
	}
	if c.Handles == 0 {
		return nil
	}
	return c
}

// hasChannelState reports whether any subtask of the operator has input (or output) channel
// state with data: Flink ignores handles without offsets, which hold no bytes.
func hasChannelState(l *checkpoint.OperatorLayout, input bool) bool {
	for i := range l.Subtasks {
		list := l.Subtasks[i].OutputChannels()
		if input {
			list = l.Subtasks[i].InputChannels()
		}
		for _, c := range list {
			if c.Size > 0 {
				return true
			}
		}
	}
	return false
}

// resolve sets the status and mapping for a vertex going from oldP to newP.
func (c *ChannelDistribution) resolve(m SubtaskMapper, oldP, newP int) {
	c.Mapper = m
	switch {
	case oldP == newP:
		c.Status = ChannelUnchanged
		c.Mapping = make([][]int, newP)
		for i := range c.Mapping {
			c.Mapping[i] = []int{i}
		}
	case m == MapperUnsupported:
		c.Status = ChannelUnsupported
	case m == MapperUnspecified || m > MapperUnsupported:
		c.Status = ChannelUnknownMapper
	default:
		c.Status = ChannelMapped
		c.Mapping = MapSubtasks(m, oldP, newP)
	}
}

// Share returns what new subtask i receives of the channel state.
func (c *ChannelDistribution) Share(i int) ChannelShare {
	var sh ChannelShare
	if c.Mapping == nil || i < 0 || i >= len(c.Mapping) {
		return sh
	}
	sh.Known = true
	for _, j := range c.Mapping[i] {
		if j >= len(c.perOld) {
			continue
		}
		o := &c.perOld[j]
		if o.handles == 0 {
			continue
		}
		sh.OldSubtasks = append(sh.OldSubtasks, j)
		sh.Bytes += o.bytes
		sh.InlineBytes += o.inline
		sh.Handles += o.handles
	}
	return sh
}

// accumulate adds the channel part of every new subtask to the operator pass; it returns false
// when the distribution is unknown.
func (c *ChannelDistribution) accumulate(sc *scratch) bool {
	if c.Mapping == nil {
		return false
	}
	for i, olds := range c.Mapping {
		sc.stop.Check()
		for _, j := range olds {
			if j < len(c.perOld) {
				o := &c.perOld[j]
				sc.acc[i].payload += o.cost
				sc.acc[i].inline += o.inline
				sc.xacc[i].cbytes += o.bytes
			}
		}
	}
	return true
}
