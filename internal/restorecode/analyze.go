package restorecode

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/classfile"
)

// listCheckpointedState is the name Flink registers a ListCheckpointed function's list under
// (DefaultOperatorStateBackend.DEFAULT_OPERATOR_STATE_NAME).
const listCheckpointedState = "_default_"

// Analyze reads the classes of the inputs and reports, for every class whose restore code
// registers operator state, each state's name, mode and restore assumption. Unreadable inputs,
// classes and methods become Report.Errors; the error is non-nil only when ctx ends.
func Analyze(ctx context.Context, inputs []Input, opts Options) (*Report, error) {
	opts = opts.withDefaults()
	set := &classSet{byName: map[string]*entry{}, opts: opts}
	defer set.close()
	rep := &Report{Classes: []ClassReport{}, Errors: []Error{}}
	for _, in := range inputs {
		if err := set.addInput(ctx, in); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rep.Errors = append(rep.Errors, Error{Jar: in.Path, Message: err.Error()})
		}
	}
	flag, stop := cancel.Watch(ctx)
	defer stop()
	var scratch []byte // the bytes of the classes the screen drops, one buffer for all
	for i, name := range set.order {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := set.byName[name]
		c := e.class // parsed already as another class's superclass or helper
		if !e.parsed {
			b, err := e.read(scratch)
			if err == nil && !mayRegister(b) {
				scratch = b
				continue
			}
			if err == nil && len(b) > 0 && cap(scratch) > 0 && &b[0] == &scratch[:1][0] {
				b = bytes.Clone(b) // the parsed class keeps slices of its bytes
			}
			c = set.parse(e, b, err)
		}
		if c != nil && candidate(c) {
			set.candidates = append(set.candidates, c)
		}
	}
	// Every candidate is parsed before any is analysed: an interface call on a restore path may
	// run an implementation that is itself a candidate (it registers the state).
	for i, c := range set.candidates {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cr, errs, err := analyzeClass(set, c, set.byName[c.Name].jar, opts, flag)
		if err != nil {
			return nil, err
		}
		rep.Errors = append(rep.Errors, errs...)
		if cr != nil {
			rep.Classes = append(rep.Classes, *cr)
		}
	}
	rep.Errors = append(rep.Errors, set.errs...)
	sort.SliceStable(rep.Classes, func(i, j int) bool { return rep.Classes[i].Class < rep.Classes[j].Class })
	return rep, nil
}

// candidate: the class declares a restore method or calls a registration method. Whether a
// restoreState(List) is one is decided by the class hierarchy, in analyzeClass.
func candidate(c *classfile.Class) bool {
	for _, m := range c.Methods {
		if restoreRoot(&m) {
			return true
		}
	}
	return registersState(c)
}

func registersState(c *classfile.Class) bool {
	for i, k := range c.Pool {
		if k.Tag == classfile.TagMethodref || k.Tag == classfile.TagInterfaceMethodref {
			if ref, ok := c.Pool.Member(uint16(i)); ok {
				if _, reg := registration(ref); reg {
					return true
				}
			}
		}
	}
	return false
}

// restoreRoot: by its signature, CheckpointedFunction/AbstractStreamOperator
// initializeState(context), a sink-v2 restoreWriter, or a restoreState(List), which is a root
// only in a ListCheckpointed function (isRestoreRoot).
func restoreRoot(m *classfile.Method) bool {
	if m.Code == nil || m.Access&classfile.AccStatic != 0 {
		return false
	}
	if m.Name == "initializeState" && strings.HasPrefix(m.Desc, "(L") && strings.HasSuffix(m.Desc, "Context;)V") {
		return true
	}
	return isListRestore(m) || sinkWriterRestore(m)
}

// ListCheckpointed's restore method.
const listRestoreName, listRestoreDesc = "restoreState", "(Ljava/util/List;)V"

func isListRestore(m *classfile.Method) bool {
	return m.Name == listRestoreName && m.Desc == listRestoreDesc
}

// isRestoreRoot: a restore root of the analysed class; its restoreState(List) counts when Flink
// calls it (listRestored).
func (a *analysis) isRestoreRoot(m *classfile.Method) bool {
	return restoreRoot(m) && (!isListRestore(m) || a.listRestored())
}

// sinkWriterState is the state SinkWriterOperator registers for a sink-v2 writer's state and
// hands, on restore, to the sink's restoreWriter (StatefulSinkWriterStateHandler).
const sinkWriterState = "writer_raw_states"

// sinkWriterRestore: a sink-v2 Sink's restoreWriter(InitContext or WriterInitContext,
// Collection<WriterStateT>), called with the restored writer_raw_states on every restored
// subtask, including new ones that receive none.
func sinkWriterRestore(m *classfile.Method) bool {
	return m.Name == "restoreWriter" && strings.HasPrefix(m.Desc, "(L") &&
		strings.Contains(m.Desc, "InitContext;Ljava/util/Collection;)L")
}

// analyzeClass runs the restore roots of c (twice when a field was read before a later store
// gave it a value), then every other method of c that registers state.
func analyzeClass(set *classSet, c *classfile.Class, jar string, opts Options, flag *cancel.Flag) (*ClassReport, []Error, error) {
	steps := 0
	a := newAnalysis(set, c, jar, opts, flag, &steps)
	for pass := 0; pass < 2; pass++ {
		a.states, a.events, a.lambdas, a.missed = nil, nil, nil, false
		for i := range c.Methods {
			if m := &c.Methods[i]; a.isRestoreRoot(m) {
				if err := a.runRoot(m); err != nil {
					return nil, nil, err
				}
			}
		}
		if !a.missed || len(a.fields) == 0 {
			break
		}
	}
	if len(a.states) > 0 {
		// open() runs after initializeState on every subtask: a state handle kept in a field
		// is often read there (SourceOperator's splits, FlinkKafkaConsumerBase's filter).
		for i := range c.Methods {
			m := &c.Methods[i]
			if m.Name == "open" && m.Code != nil && m.Access&classfile.AccStatic == 0 && !a.visited[methodKey(c, m)] {
				if err := a.runRoot(m); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	for i := range c.Methods {
		m := &c.Methods[i]
		if m.Code != nil && !a.visited[methodKey(c, m)] && callsRegistration(c, m) {
			a.silent = a.neverCalled(m)
			err := a.runRoot(m)
			a.silent = false
			if err != nil {
				return nil, nil, err
			}
		}
	}
	if len(a.states) == 0 {
		return nil, a.errs, nil
	}
	return &ClassReport{Class: classfile.BinaryName(c.Name), Jar: jar, States: a.label()}, a.errs, nil
}

func (a *analysis) runRoot(m *classfile.Method) error {
	args := []value{}
	if m.Access&classfile.AccStatic == 0 {
		args = append(args, value{k: kThis, st: -1})
	}
	var f facts
	if name, ok := map[string]string{"restoreState": listCheckpointedState, "restoreWriter": sinkWriterState}[m.Name]; ok {
		at := event{cls: a.root.Name, method: m.Name, line: m.Code.Line(0), restored: true}
		st := a.register(name, "", SplitDistribute, true, at)
		restored := value{k: kIterable, st: st}
		if name == sinkWriterState {
			// SinkWriterOperator copies every restored element into a new list
			// (StatefulSinkWriterStateHandler) and hands that list to restoreWriter.
			args = append(args, none) // the writer's init context
			restored.k = kCopy
		}
		args = append(args, restored)
		a.events = append(a.events, event{k: evRead, st: st, cls: a.root.Name, method: m.Name, restored: true})
		f.restored = true
	}
	_, err := a.run(a.root, m, args, f, 0)
	var budget errBudget
	if errors.As(err, &budget) {
		if !a.exhausted {
			a.exhausted = true
			a.fail(a.root, m, 0, "analysis stopped after %d interpreted instructions (limit per class)", a.opts.MaxSteps)
		}
		return nil
	}
	return err
}

// neverCalled reports whether a private method of the analysed class is dead on the restore
// path: every call of it sits in a method the analysis interpreted, none of them ran (they are in
// code a branch never takes, such as FlinkKafkaProducer's migration behind a test that is always
// false), and neither a nest member nor a method handle can reach it. Its states are then
// registered but not read (NOT-READ).
func (a *analysis) neverCalled(m *classfile.Method) bool {
	c := a.root
	if m.Access&classfile.AccPrivate == 0 || a.called[m.Name+" "+m.Desc] {
		return false
	}
	classes := []*classfile.Class{c}
	for _, n := range c.NestMembers {
		if nc := a.set.load(n); nc != nil {
			classes = append(classes, nc)
		} else {
			return false
		}
	}
	sites := 0
	for _, k := range classes {
		for i, p := range k.Pool {
			if p.Tag != classfile.TagMethodHandle {
				continue
			}
			if h, ok := k.Pool.MethodHandle(uint16(i)); ok && h.Ref.Class == c.Name && h.Ref.Name == m.Name && h.Ref.Desc == m.Desc {
				return false
			}
		}
		for j := range k.Methods {
			caller := &k.Methods[j]
			n, ok := callSites(k, caller, c.Name, m)
			if !ok || n > 0 && (k != c || !a.visited[methodKey(k, caller)]) {
				return false
			}
			sites += n
		}
	}
	return sites > 0
}

// callSites counts the invokes of cls.m in caller's code; ok is false when the code does not
// decode.
func callSites(k *classfile.Class, caller *classfile.Method, cls string, m *classfile.Method) (int, bool) {
	if caller.Code == nil {
		return 0, true
	}
	ins, err := classfile.DecodeAll(caller.Code.Bytes)
	if err != nil {
		return 0, false
	}
	n := 0
	for _, in := range ins {
		if in.Op >= classfile.Invokevirtual && in.Op <= classfile.Invokeinterface {
			if ref, ok := k.Pool.Member(in.Index); ok && ref.Class == cls && ref.Name == m.Name && ref.Desc == m.Desc {
				n++
			}
		}
	}
	return n, true
}

// callsRegistration reports whether m's code calls a registration method.
func callsRegistration(c *classfile.Class, m *classfile.Method) bool {
	ins, err := classfile.DecodeAll(m.Code.Bytes)
	if err != nil {
		return false
	}
	for _, in := range ins {
		if in.Op == classfile.Invokeinterface || in.Op == classfile.Invokevirtual {
			if ref, ok := c.Pool.Member(in.Index); ok {
				if _, reg := registration(ref); reg {
					return true
				}
			}
		}
	}
	return false
}
