package restorecode

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/classfile"
)

// analysis analyses the restore code of one class: its registered states and the events seen on
// the restore path.
type analysis struct {
	set       *classSet
	root      *classfile.Class
	jar       string
	opts      Options
	flag      *cancel.Flag
	steps     *int // shared with the constant-collecting sub-analyses
	states    []*stateRec
	events    []event
	fields    map[string]value // fields of the analysed object ("name") and static ones ("owner.name")
	lambdas   []lambda
	errs      []Error
	serial    int32
	calls     []string        // methods on the call stack, to cut recursion
	visited   map[string]bool // methods interpreted, for the extra roots
	collect   map[string]value
	consts    map[string]map[string]value // per class: fields assigned one constant in <clinit>/<init>
	missed    bool                        // a field of the object was read before it was written
	exhausted bool                        // the step budget ran out (reported once)
	called    map[string]bool             // methods of the analysed class a call reached ("name desc")
	silent    bool                        // registrations only: a method no restore path runs
	listRoot  int8                        // listRestored's answer: 0 not asked yet, 1 yes, -1 no
}

type stateRec struct {
	name, note, mode string
	constant         bool
	reg              event
}

type lambda struct {
	impl     classfile.MethodHandle
	captured []value
}

// errBudget ends an analysis whose steps ran out.
type errBudget struct{}

func (errBudget) Error() string { return "budget exhausted" }

func newAnalysis(set *classSet, c *classfile.Class, jar string, opts Options, flag *cancel.Flag, steps *int) *analysis {
	return &analysis{set: set, root: c, jar: jar, opts: opts, flag: flag, steps: steps,
		fields: map[string]value{}, visited: map[string]bool{}, consts: map[string]map[string]value{}}
}

// step counts one interpreted instruction against the budget and the context.
func (a *analysis) step() error {
	*a.steps++
	if *a.steps > a.opts.MaxSteps {
		return errBudget{}
	}
	if *a.steps&1023 == 0 {
		if err := a.flag.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (a *analysis) fail(cls *classfile.Class, m *classfile.Method, off int, format string, args ...any) {
	name := ""
	if cls != nil {
		name = classfile.BinaryName(cls.Name)
	}
	meth := ""
	if m != nil {
		meth = m.Name + m.Desc
	}
	a.errs = append(a.errs, Error{Jar: a.jar, Class: name, Method: meth, Offset: off, Message: fmt.Sprintf(format, args...)})
}

// register records a state registration and returns its index.
func (a *analysis) register(name, note, mode string, constant bool, at event) int32 {
	for i, s := range a.states {
		if s.mode == mode && ((constant && s.constant && s.name == name) ||
			(!constant && !s.constant && s.reg.cls == at.cls && s.reg.method == at.method && s.reg.off == at.off)) {
			return int32(i)
		}
	}
	a.states = append(a.states, &stateRec{name: name, note: note, mode: mode, constant: constant, reg: at})
	return int32(len(a.states) - 1)
}

// methodKey names a method for the call stack and errors.
func methodKey(c *classfile.Class, m *classfile.Method) string { return c.Name + "." + m.Name + m.Desc }

// findMethod looks name+desc up in cls and its superclasses within the set.
func (a *analysis) findMethod(cls, name, desc string) (*classfile.Class, *classfile.Method) {
	for i := 0; i < 32 && cls != ""; i++ {
		c := a.set.load(cls)
		if c == nil {
			return nil, nil
		}
		if m := c.Method(name, desc); m != nil {
			return c, m
		}
		cls = c.Super
	}
	return nil, nil
}

// run interprets m of cls with the given arguments (receiver first for instance methods) and
// returns the join of its return values. Calls deeper than MaxDepth and recursive calls are not
// followed.
func (a *analysis) run(cls *classfile.Class, m *classfile.Method, args []value, f facts, depth int) (value, error) {
	key := methodKey(cls, m)
	if m.Code == nil || depth > a.opts.MaxDepth {
		return none, nil
	}
	for _, k := range a.calls {
		if k == key {
			return none, nil
		}
	}
	a.calls = append(a.calls, key)
	defer func() { a.calls = a.calls[:len(a.calls)-1] }()
	a.visited[key] = true
	a.serial++
	inv, err := newInvocation(a, cls, m, depth, a.serial)
	if err != nil {
		a.fail(cls, m, offsetOf(err), "%v", err)
		return none, nil
	}
	entry, ok := inv.entryFrame(args, f)
	if !ok {
		a.fail(cls, m, 0, "max_locals %d too small for the arguments", m.Code.MaxLocals)
		return none, nil
	}
	if err := inv.interpret(entry); err != nil {
		if ie, ok := err.(*interpError); ok {
			a.fail(cls, m, ie.off, "%s", ie.msg)
			return none, nil
		}
		return none, err
	}
	if err := inv.finish(); err != nil {
		return none, err
	}
	return inv.ret, nil
}

func offsetOf(err error) int {
	if fe, ok := err.(*classfile.FormatError); ok {
		return int(fe.Off)
	}
	return 0
}
