package restorecode

import (
	"container/heap"
	"fmt"
	"sort"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// Limits on one method's abstract interpretation: the frames kept at block starts take
// blocks × (max_locals + max_stack) values.
const (
	maxFrameSlots = 4096      // max_locals + max_stack of an analysed method
	maxFrameCells = 4_000_000 // blocks × frame slots
)

// invocation is one interpretation of a method with given arguments.
type invocation struct {
	a         *analysis
	cls       *classfile.Class
	m         *classfile.Method
	depth     int
	serial    int32
	ins       []classfile.Instruction
	at        []int32 // code offset -> instruction index, -1 inside an instruction
	blocks    []block
	blockAt   []int32 // instruction index -> block index
	in        []*frame
	ret       value
	events    []event
	eventAt   map[eventKey]int  // index in events, per kind, state and offset
	back      [][2]int          // back edges: target, source offset
	hasNext   map[int32][]int   // iterator id -> offsets of its hasNext() calls
	elemPuts  []int             // offsets where an element went into a map
	copyPuts  []int             // offsets where an element went into a local list
	cond      [2]value          // operands of the last conditional branch
	handlers  map[int32][]int32 // block -> handler blocks covering it
	scanErr   error             // the step budget ran out in finish's loop scans
	filterSum []int32           // prefix counts of filter instructions, for rangeFilter
}

type block struct{ start, end int32 } // instruction indexes [start, end)

// interpError is malformed or unanalysable bytecode at an offset of the method.
type interpError struct {
	off int
	msg string
}

func (e *interpError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }

func newInvocation(a *analysis, cls *classfile.Class, m *classfile.Method, depth int, serial int32) (*invocation, error) {
	ins, err := classfile.DecodeAll(m.Code.Bytes)
	if err != nil {
		return nil, err
	}
	if n := int(m.Code.MaxLocals) + int(m.Code.MaxStack); n > maxFrameSlots {
		return nil, &classfile.FormatError{Msg: fmt.Sprintf("frame of %d slots exceeds the analysis limit of %d", n, maxFrameSlots)}
	}
	inv := &invocation{a: a, cls: cls, m: m, depth: depth, serial: serial, ins: ins, hasNext: map[int32][]int{}}
	inv.at = make([]int32, len(m.Code.Bytes))
	for i := range inv.at {
		inv.at[i] = -1
	}
	for i, in := range ins {
		inv.at[in.Off] = int32(i)
	}
	for _, h := range m.Code.Exceptions {
		if inv.at[h.Handler] < 0 {
			return nil, &classfile.FormatError{Off: int64(h.Handler), Field: "exception_table", Msg: "handler_pc is not the start of an instruction"}
		}
	}
	inv.splitBlocks()
	if len(inv.blocks)*(int(m.Code.MaxLocals)+int(m.Code.MaxStack)) > maxFrameCells {
		return nil, &classfile.FormatError{Msg: fmt.Sprintf("%d blocks exceed the analysis limit", len(inv.blocks))}
	}
	if err := inv.mapHandlers(); err != nil {
		return nil, err
	}
	return inv, nil
}

// splitBlocks cuts the code at jump targets, after jumps, and at exception handlers.
func (inv *invocation) splitBlocks() {
	leader := make([]bool, len(inv.ins)+1)
	leader[0] = true
	for i := range inv.ins {
		in := &inv.ins[i]
		for _, t := range in.Targets() {
			leader[inv.at[t]] = true
		}
		if in.IsBranch() || in.Switch != nil || in.EndsBlock() {
			leader[i+1] = true
		}
	}
	for _, h := range inv.m.Code.Exceptions {
		leader[inv.at[h.Handler]] = true
		if j := inv.at[h.Start]; j >= 0 {
			leader[j] = true
		}
		if int(h.End) < len(inv.at) && inv.at[h.End] >= 0 {
			leader[inv.at[h.End]] = true
		}
	}
	inv.blockAt = make([]int32, len(inv.ins))
	for i := 0; i < len(inv.ins); {
		j := i + 1
		for j < len(inv.ins) && !leader[j] {
			j++
		}
		for k := i; k < j; k++ {
			inv.blockAt[k] = int32(len(inv.blocks))
		}
		inv.blocks = append(inv.blocks, block{int32(i), int32(j)})
		i = j
	}
	inv.in = make([]*frame, len(inv.blocks))
}

// mapHandlers lists, per block, the handlers whose range holds the block's start; the pairs are
// bounded by maxFrameCells (65,535 handlers each covering 20,000 blocks would be a billion).
func (inv *invocation) mapHandlers() error {
	inv.handlers = map[int32][]int32{}
	pairs := 0
	for _, h := range inv.m.Code.Exceptions {
		hb := inv.blockAt[inv.at[h.Handler]]
		first := sort.Search(len(inv.blocks), func(b int) bool { return inv.ins[inv.blocks[b].start].Off >= int(h.Start) })
		for b := first; b < len(inv.blocks) && inv.ins[inv.blocks[b].start].Off < int(h.End); b++ {
			if pairs++; pairs > maxFrameCells {
				return &classfile.FormatError{Off: int64(h.Start), Field: "exception_table", Msg: "exception handlers cover too many blocks to analyse"}
			}
			inv.handlers[int32(b)] = append(inv.handlers[int32(b)], hb)
		}
	}
	return nil
}

// entryFrame places the arguments in the first locals.
func (inv *invocation) entryFrame(args []value, f facts) (*frame, bool) {
	fr := &frame{locals: make([]value, inv.m.Code.MaxLocals), facts: f}
	for i := range fr.locals {
		fr.locals[i] = none
	}
	params, _, ok := classfile.ParseDescriptor(inv.m.Desc)
	if !ok {
		return nil, false
	}
	slot, k := 0, 0
	if inv.m.Access&classfile.AccStatic == 0 {
		if slot >= len(fr.locals) {
			return nil, false
		}
		fr.locals[0] = argAt(args, 0)
		slot, k = 1, 1
	}
	for _, p := range params {
		n := classfile.TypeSlots(p)
		if slot+n > len(fr.locals) {
			return nil, false
		}
		fr.locals[slot] = argAt(args, k)
		slot, k = slot+n, k+1
	}
	return fr, true
}

func argAt(args []value, i int) value {
	if i < len(args) {
		return args[i]
	}
	return none
}

// queue is the worklist of blocks, lowest first, so straight-line code runs in order.
type queue struct {
	h  []int32
	in []bool
}

func (q *queue) Len() int           { return len(q.h) }
func (q *queue) Less(i, j int) bool { return q.h[i] < q.h[j] }
func (q *queue) Swap(i, j int)      { q.h[i], q.h[j] = q.h[j], q.h[i] }
func (q *queue) Push(x any)         { q.h = append(q.h, x.(int32)) }
func (q *queue) Pop() any {
	x := q.h[len(q.h)-1]
	q.h = q.h[:len(q.h)-1]
	return x
}
func (q *queue) add(b int32) {
	if !q.in[b] {
		q.in[b] = true
		heap.Push(q, b)
	}
}

// interpret runs the worklist until the frames at block starts no longer change.
func (inv *invocation) interpret(entry *frame) error {
	q := &queue{in: make([]bool, len(inv.blocks))}
	inv.in[0] = entry
	q.add(0)
	for q.Len() > 0 {
		b := heap.Pop(q).(int32)
		q.in[b] = false
		if err := inv.runBlock(b, q); err != nil {
			return err
		}
	}
	return nil
}

// flow merges f into the frame at the start of block b and queues b when it changed.
func (inv *invocation) flow(b int32, f *frame, q *queue, off int) error {
	if inv.in[b] == nil {
		inv.in[b] = f.clone()
		q.add(b)
		return nil
	}
	changed, ok := inv.in[b].merge(f)
	if !ok {
		return &interpError{off, "stack heights differ where paths meet"}
	}
	if changed {
		q.add(b)
	}
	return nil
}

func (inv *invocation) runBlock(b int32, q *queue) error {
	f := inv.in[b].clone()
	for _, h := range inv.handlers[b] {
		hf := &frame{locals: f.locals, stack: []value{none}, facts: f.facts}
		if err := inv.flow(h, hf, q, inv.ins[inv.blocks[b].start].Off); err != nil {
			return err
		}
	}
	blk := inv.blocks[b]
	for i := blk.start; i < blk.end; i++ {
		in := &inv.ins[i]
		if err := inv.a.step(); err != nil {
			return err
		}
		p := f.facts.pend
		f.facts.pend = pending{}
		if done, err := inv.materialise(f, in, p); done || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if err := inv.exec(f, in); err != nil {
			return err
		}
	}
	last := &inv.ins[blk.end-1]
	return inv.successors(f, last, blk.end, q)
}

// successors passes the frame after the block's last instruction to the blocks that follow.
func (inv *invocation) successors(f *frame, last *classfile.Instruction, next int32, q *queue) error {
	for _, h := range inv.handlers[inv.blockAt[next-1]] {
		hf := &frame{locals: f.locals, stack: []value{none}, facts: f.facts}
		if err := inv.flow(h, hf, q, last.Off); err != nil {
			return err
		}
	}
	if last.Switch != nil {
		for _, t := range last.Targets() {
			if err := inv.flow(inv.blockAt[inv.at[t]], f, q, last.Off); err != nil {
				return err
			}
		}
		return nil
	}
	if last.IsBranch() {
		if last.Target <= last.Off {
			inv.back = append(inv.back, [2]int{last.Target, last.Off})
		}
		taken, fall := inv.branchFacts(f, last)
		if last.Op == classfile.Jsr || last.Op == classfile.JsrW {
			return &interpError{last.Off, "jsr subroutines are not analysed"}
		}
		never := inv.cond[0].k == kFalse && (last.Op == classfile.Ifeq || last.Op == classfile.Ifne)
		if !never || last.Op == classfile.Ifeq {
			tf := f.clone()
			tf.facts = taken
			if err := inv.flow(inv.blockAt[inv.at[last.Target]], tf, q, last.Off); err != nil {
				return err
			}
		}
		if last.Op == classfile.Goto || last.Op == classfile.GotoW || never && last.Op == classfile.Ifeq {
			return nil // ifeq on false always jumps: the code after it never runs
		}
		f.facts = fall
	} else if last.EndsBlock() {
		return nil
	}
	if int(next) >= len(inv.ins) {
		return &interpError{last.Off, "code falls off its end"}
	}
	return inv.flow(inv.blockAt[next], f, q, last.Off)
}
