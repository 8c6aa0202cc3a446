package restorecode

import (
	"encoding/binary"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// The subtype index answers "which classes of the inputs extend or implement X" for the closed
// world over the inputs: a call on an interface or abstract method whose receiver the analysis
// cannot pin down may run any implementation among the classes, and none other when the inputs
// are the whole job (a job jar bundles its connectors). It is built once per Analyze, on the
// first call that needs it, from the class headers only (access flags, super class, interfaces),
// so a jar whose restore code never needs it pays nothing.

// Bounds of the closed world for one call.
const (
	maxClosedImpls = 8    // distinct methods followed; more and the call stays an escape
	maxClosedVisit = 4096 // subtypes visited
)

type hierarchy struct {
	kids  map[string][]string // super class or interface -> direct subtypes
	flags map[string]uint16   // access flags per class
}

// index returns the subtype index, building it on first use from every class of the inputs.
// The step budget of the analysis that asks is charged one step per class.
func (a *analysis) index() *hierarchy {
	s := a.set
	if s.hier != nil {
		return s.hier
	}
	h := &hierarchy{kids: map[string][]string{}, flags: map[string]uint16{}}
	s.hier = h
	var buf []byte
	for i, name := range s.order {
		if i%1024 == 0 && a.flag.Err() != nil {
			return h
		}
		*a.steps++
		e := s.byName[name]
		if e.parsed {
			if e.class != nil {
				h.add(e.class.Name, e.class.Super, e.class.Interfaces, e.class.Access)
			}
			continue
		}
		b, err := e.read(buf)
		if err != nil {
			continue
		}
		buf = b
		if cn, super, ifaces, access, ok := classHeader(b); ok {
			h.add(cn, super, ifaces, access)
		}
	}
	return h
}

func (h *hierarchy) add(name, super string, ifaces []string, access uint16) {
	h.flags[name] = access
	if super != "" && super != "java/lang/Object" {
		h.kids[super] = append(h.kids[super], name)
	}
	for _, in := range ifaces {
		h.kids[in] = append(h.kids[in], name)
	}
}

// classHeader reads a class file's name, super class, interfaces and access flags without
// parsing the rest; ok is false for anything malformed (such a class is left out).
func classHeader(b []byte) (name, super string, ifaces []string, access uint16, ok bool) {
	if len(b) < 10 || binary.BigEndian.Uint32(b) != classfile.Magic {
		return "", "", nil, 0, false
	}
	n := int(binary.BigEndian.Uint16(b[8:]))
	offs := make([]int, n) // offset of each constant, 0 for the unused slot after a long or double
	off := 10
	for i := 1; i < n; i++ {
		if off >= len(b) {
			return "", "", nil, 0, false
		}
		offs[i] = off
		size, known := constSizes[b[off]]
		switch {
		case !known:
			return "", "", nil, 0, false
		case b[off] == classfile.TagUtf8 && off+3 <= len(b):
			size = 3 + int(binary.BigEndian.Uint16(b[off+1:]))
		case b[off] == classfile.TagLong || b[off] == classfile.TagDouble:
			i++
		}
		off += size
	}
	className := func(at int) (string, bool) {
		if at+2 > len(b) {
			return "", false
		}
		i := int(binary.BigEndian.Uint16(b[at:]))
		if i == 0 {
			return "", true
		}
		if i >= n || offs[i] == 0 || b[offs[i]] != classfile.TagClass || offs[i]+3 > len(b) {
			return "", false
		}
		u := int(binary.BigEndian.Uint16(b[offs[i]+1:]))
		if u == 0 || u >= n || offs[u] == 0 || b[offs[u]] != classfile.TagUtf8 {
			return "", false
		}
		l := int(binary.BigEndian.Uint16(b[offs[u]+1:]))
		if offs[u]+3+l > len(b) {
			return "", false
		}
		return string(b[offs[u]+3 : offs[u]+3+l]), true // binary names are ASCII in practice
	}
	if off+8 > len(b) {
		return "", "", nil, 0, false
	}
	access = binary.BigEndian.Uint16(b[off:])
	name, ok1 := className(off + 2)
	super, ok2 := className(off + 4)
	cnt := int(binary.BigEndian.Uint16(b[off+6:]))
	if !ok1 || !ok2 || name == "" || off+8+2*cnt > len(b) {
		return "", "", nil, 0, false
	}
	for k := 0; k < cnt; k++ {
		in, ok := className(off + 8 + 2*k)
		if !ok || in == "" {
			return "", "", nil, 0, false
		}
		ifaces = append(ifaces, in)
	}
	return name, super, ifaces, access, true
}

// closedWorld returns the method every concrete subtype of the call's owner in the inputs runs
// for it, or nil when one of them has no code to run in the inputs (it inherits the method from
// outside them, or a default method), when there are more than the bounds allow, or when there
// is none: the call then stays an escape.
func (a *analysis) closedWorld(c *call) []impl {
	h := a.index()
	var out []impl
	found := true
	complete := h.walkSubtypes(c.ref.Class, maxClosedVisit, func(_, k string) (descend, stop bool) {
		if h.flags[k]&(classfile.AccInterface|classfile.AccAbstract) != 0 {
			return true, false
		}
		cls, m := a.findMethod(k, c.ref.Name, c.ref.Desc)
		if m == nil || m.Code == nil || m.Access&classfile.AccAbstract != 0 {
			found = false
			return false, true
		}
		if !containsImpl(out, m) {
			if len(out) == maxClosedImpls {
				found = false
				return false, true
			}
			out = append(out, impl{cls, m})
		}
		return true, false
	})
	if !complete || !found {
		return nil
	}
	return out
}

// walkSubtypes visits the subtypes of root in the inputs breadth first, each once, calling
// visit with each one's supertype on the way down; visit says whether to walk on below the type
// and whether to stop. Hostile class files may form cycles: the walk sees at most limit types,
// root included, and returns false when it stopped there with types left unseen.
func (h *hierarchy) walkSubtypes(root string, limit int, visit func(super, k string) (descend, stop bool)) (complete bool) {
	seen := map[string]bool{root: true}
	queue := []string{root}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, k := range h.kids[name] {
			if seen[k] {
				continue
			}
			if seen[k] = true; len(seen) > limit {
				return false
			}
			descend, stop := visit(name, k)
			if stop {
				return true
			}
			if descend {
				queue = append(queue, k)
			}
		}
	}
	return true
}

func containsImpl(impls []impl, m *classfile.Method) bool {
	for _, im := range impls {
		if im.m == m {
			return true
		}
	}
	return false
}

// Flink's legacy interfaces, as tryRestoreFunction tests them (instanceof: a superclass or a
// superinterface counts).
const (
	listCheckpointedType     = "org/apache/flink/streaming/api/checkpoint/ListCheckpointed"
	checkpointedFunctionType = "org/apache/flink/streaming/api/checkpoint/CheckpointedFunction"
)

// Bounds of the walks that decide whether a restoreState(List) is a restore root.
const (
	maxSupertypes     = 64  // superclasses and superinterfaces visited from one class
	maxListSubclasses = 256 // subclasses visited for one inherited restoreState
)

// legacyKind walks c's superclasses and superinterfaces within the inputs (a type outside them
// counts by its name only) and reports whether c is a ListCheckpointed and a CheckpointedFunction.
// Hostile class files may form cycles: each type is visited once, and at most maxSupertypes;
// complete is false when the walk stopped there with supertypes left unread.
func (s *classSet) legacyKind(c *classfile.Class) (lc, cf, complete bool) {
	seen := map[string]bool{c.Name: true}
	queue := []*classfile.Class{c}
	complete = true
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		for _, up := range append([]string{k.Super}, k.Interfaces...) {
			if up == "" || seen[up] {
				continue
			}
			if len(seen) > maxSupertypes {
				complete = false
				continue
			}
			seen[up] = true
			lc = lc || hasSuffixClass(up, listCheckpointedType)
			cf = cf || hasSuffixClass(up, checkpointedFunctionType)
			if uc := s.load(up); uc != nil {
				queue = append(queue, uc)
			}
		}
	}
	return lc, cf, complete
}

// listRestored reports whether Flink calls the analysed class's restoreState(List) on restore:
// the class is a ListCheckpointed and not a CheckpointedFunction (tryRestoreFunction calls
// initializeState then), or, when it is neither, a subclass within the inputs is one and
// inherits the method. The state is the class's, as an inherited initializeState's is.
func (a *analysis) listRestored() bool {
	if a.listRoot == 0 {
		a.listRoot = -1
		lc, cf, complete := a.set.legacyKind(a.root)
		if !complete {
			// Past the bound the class may still be a ListCheckpointed: say so rather than
			// answer "no restore root" as if the walk had ended.
			a.fail(a.root, nil, 0, "more than %d supertypes: not decided whether Flink calls restoreState(List) on restore", maxSupertypes)
		}
		if lc && !cf || !lc && !cf && a.inheritedByListCheckpointed() {
			a.listRoot = 1
		}
	}
	return a.listRoot > 0
}

// inheritedByListCheckpointed looks for a subclass of the analysed class within the inputs that
// is a ListCheckpointed (and not a CheckpointedFunction) and does not declare its own
// restoreState(List) on the way down. Only a class's subclasses inherit its method for sure (an
// interface's default loses to a superclass's), and, each class having one superclass, the
// walks from different classes never cross: a class is visited by one walk at most. The subtype
// index charges the step budget; the walk is bounded by maxListSubclasses and honours the
// context.
func (a *analysis) inheritedByListCheckpointed() bool {
	if a.root.Access&classfile.AccInterface != 0 {
		return false
	}
	inherited := false
	complete := a.index().walkSubtypes(a.root.Name, maxListSubclasses, func(super, k string) (descend, stop bool) {
		if a.flag.Err() != nil {
			return false, true
		}
		*a.steps++
		kc := a.set.load(k)
		if kc == nil || kc.Super != super || kc.Method(listRestoreName, listRestoreDesc) != nil {
			return false, false // not a subclass (a hostile class may name a class as its interface), or its own root
		}
		lc, cf, _ := a.set.legacyKind(kc) // a subclass past the bound is not taken for a root
		inherited = lc && !cf
		return !cf, inherited
	})
	if !complete && a.flag.Err() == nil {
		a.fail(a.root, nil, 0, "more than %d subclasses: not decided whether one inherits restoreState(List) as a ListCheckpointed", maxListSubclasses)
	}
	return inherited
}
