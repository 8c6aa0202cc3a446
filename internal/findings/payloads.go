package findings

import (
	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// jobPayloads is what PF121 (jobManagerMemory) weighs: each vertex's deployment payload total
// (vertexPayloadTotal) in the order of Simulate's Result, their sum, and for each vertex k the
// largest total before and after it, so that the safe-parallelism search can tell in constant
// time whether vertex k at another parallelism would be the vertex the rule names (the first
// with the largest total). A whole-job check computes it from its Result; a Session adds its
// vertices range by range in a first pass (PayloadPass), keeping 8 bytes a vertex in each of
// three slices and a map entry, not the vertices' simulations.
type jobPayloads struct {
	index               map[checkpoint.OperatorID]int // vertex ID → its position k
	totals              []int64
	total               int64
	maxBefore, maxAfter []int64

	// top is the position of the first vertex with the largest total (-1 while every total is
	// 0), topID that vertex's ID: the rule's finding names it, reported with the range that
	// holds it.
	top   int
	topID checkpoint.OperatorID
}

func newJobPayloads(n int) *jobPayloads {
	return &jobPayloads{index: make(map[checkpoint.OperatorID]int, n), totals: make([]int64, 0, n), top: -1}
}

// add appends vertex v, which follows every vertex added before in Simulate's order.
func (p *jobPayloads) add(v *rescale.VertexAssignment) {
	t := vertexPayloadTotal(v)
	k := len(p.totals)
	p.index[v.ID] = k
	p.totals = append(p.totals, t)
	p.total += t
	if p.top < 0 && t > 0 || p.top >= 0 && t > p.totals[p.top] {
		p.top, p.topID = k, v.ID
	}
}

// finish computes the largest totals before and after each vertex, once every vertex is added.
func (p *jobPayloads) finish(stop *cancel.Flag) {
	n := len(p.totals)
	p.maxBefore, p.maxAfter = make([]int64, n), make([]int64, n)
	var m int64
	for k, t := range p.totals {
		stop.Check()
		p.maxBefore[k] = m
		m = max(m, t)
	}
	m = 0
	for k := n - 1; k >= 0; k-- {
		p.maxAfter[k] = m
		m = max(m, p.totals[k])
	}
}

// payloadsOf is jobPayloads of a whole Result.
func payloadsOf(stop *cancel.Flag, res *rescale.Result) *jobPayloads {
	p := newJobPayloads(len(res.Vertices))
	for _, v := range res.Vertices {
		stop.Check()
		p.add(v)
	}
	p.finish(stop)
	return p
}

// jobPayloads returns the payload totals of the whole job: the Session's when it set them (a
// range's Result holds only that range), otherwise computed from the Result on first use.
func (c *Context) jobPayloads() *jobPayloads {
	if c.payloads == nil {
		c.payloads = payloadsOf(c.stop, c.Result)
	}
	return c.payloads
}

// jobManagerMemoryDenies is PF121's (checkJobManagerMemory) outcome for the vertex with ID id when it is
// re-simulated (res) and every other vertex is as in the check: the rule sums all vertices'
// payloads and names the first vertex with the largest total; another vertex's simulation does
// not depend on this one's parallelism.
func jobManagerMemoryDenies(c *Context, res *rescale.Result, id checkpoint.OperatorID, fail Severity) bool {
	mem := c.Options.JobManagerMemory
	if mem <= 0 || len(res.Vertices) != 1 {
		return false
	}
	p := c.jobPayloads()
	k, ok := p.index[id]
	if !ok {
		return false
	}
	vt := vertexPayloadTotal(res.Vertices[0])
	total := p.total - p.totals[k] + vt
	if total <= mem/2 || vt <= p.maxBefore[k] || p.maxAfter[k] > vt {
		return false // no finding, or it names another vertex
	}
	sev := Warning
	if total > mem {
		sev = Error
	}
	return sev >= fail
}

func vertexPayloadTotal(v *rescale.VertexAssignment) int64 {
	var t int64
	for _, op := range v.Operators {
		t += op.Summary.TotalPayloadBytes
	}
	return t
}
