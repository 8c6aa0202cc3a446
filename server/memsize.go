package server

import (
	"reflect"
	"unsafe"
)

// deepSize estimates the heap bytes reachable from v: pointed-to values, slice backing arrays (by
// capacity), string bytes and map entries, each counted once. It measures what the layout cache
// holds whatever shape checkpoint.Layout takes, in one pass linear in the layout (the cost of a
// decode is larger). Maps are estimated (Go's buckets are not visible), so the figure is an
// approximation accurate to tens of percent, which is what a budget needs.
func deepSize(v any) int64 {
	w := sizeWalker{seen: map[uintptr]bool{}, walk: map[reflect.Type]bool{}}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return 0
	}
	return int64(rv.Type().Size()) + w.refs(rv)
}

type sizeWalker struct {
	seen map[uintptr]bool      // pointers, slice arrays and string data already counted
	walk map[reflect.Type]bool // whether values of a type can reference memory
}

// refs is the memory v references beyond its own inline size.
func (w *sizeWalker) refs(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || w.mark(v.Pointer()) {
			return 0
		}
		e := v.Elem()
		return int64(e.Type().Size()) + w.refs(e)
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 || w.mark(v.Pointer()) {
			return 0
		}
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		if w.walks(v.Type().Elem()) {
			for i := range v.Len() {
				n += w.refs(v.Index(i))
			}
		}
		return n
	case reflect.String:
		s := v.String()
		if len(s) == 0 || w.mark(uintptr(unsafe.Pointer(unsafe.StringData(s)))) {
			return 0
		}
		return int64(len(s))
	case reflect.Struct:
		if !w.walks(v.Type()) {
			return 0
		}
		var n int64
		for i := range v.NumField() {
			n += w.refs(v.Field(i))
		}
		return n
	case reflect.Array:
		var n int64
		if w.walks(v.Type().Elem()) {
			for i := range v.Len() {
				n += w.refs(v.Index(i))
			}
		}
		return n
	case reflect.Map:
		if v.IsNil() || w.mark(v.Pointer()) {
			return 0
		}
		// Entries plus about half again for buckets, control bytes and load factor.
		kv := int64(v.Type().Key().Size() + v.Type().Elem().Size())
		n := int64(v.Len()) * kv * 3 / 2
		if w.walks(v.Type().Key()) || w.walks(v.Type().Elem()) {
			it := v.MapRange()
			for it.Next() {
				n += w.refs(it.Key()) + w.refs(it.Value())
			}
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		n := w.refs(e)
		if e.Kind() != reflect.Pointer {
			n += int64(e.Type().Size()) // boxed
		}
		return n
	}
	return 0
}

func (w *sizeWalker) mark(p uintptr) bool {
	if w.seen[p] {
		return true
	}
	w.seen[p] = true
	return false
}

// walks reports whether values of t can reference memory (so []int64 is not walked element by
// element).
func (w *sizeWalker) walks(t reflect.Type) bool {
	if b, ok := w.walk[t]; ok {
		return b
	}
	w.walk[t] = true // recursive types reference memory
	b := false
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.String, reflect.Map, reflect.Interface:
		b = true
	case reflect.Array:
		b = w.walks(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if w.walks(t.Field(i).Type) {
				b = true
				break
			}
		}
	}
	w.walk[t] = b
	return b
}

// DaemonBaselineBytes is the daemon's own memory outside the budget: binary, runtime, gRPC and
// HTTP servers, idle connections (measured at rest: 37–51 MiB).
const DaemonBaselineBytes = 64 << 20

// DaemonGCPercent is the GOGC preflightd runs with when it sets the soft memory limit itself
// (and GOGC is not set): the limit bounds the heap, so collecting less often costs no memory
// beyond it.
const DaemonGCPercent = 400

// SoftMemoryLimit is the Go soft memory limit for a daemon with the given memory budget (0: the
// default budget): the budget plus DaemonBaselineBytes, never above 90% of the container's
// limit. The budget counts live bytes; without a soft limit the collector lets the heap grow to
// twice what is live (GOGC=100), so four operator-heavy checks within a 600 MiB budget peaked
// at 884 MiB of RSS. With it the collector works harder near the limit instead; it is soft, so
// a check whose estimate was low still completes.
func SoftMemoryLimit(budget int64) int64 {
	if budget <= 0 {
		budget = DefaultMemoryBudget()
	}
	limit := budget + DaemonBaselineBytes
	if c, _ := ContainerMemoryLimit(); c > 0 {
		limit = min(limit, c/10*9)
	}
	return limit
}
