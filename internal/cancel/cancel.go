// Package cancel stops long CPU-bound loops (simulation, rules, searches) when their context
// ends. A Flag mirrors ctx.Done() into an atomic bool, so a loop pays one atomic load per check
// instead of a channel poll or a mutex; Check unwinds the loop with a panic that Recover turns back
// into the context's error at the API boundary, so the pure functions in between need no error
// plumbing.
package cancel

import (
	"context"
	"sync/atomic"
)

// Flag is raised when its context ends. A nil *Flag is never raised: code without a context
// passes nil and pays one nil test per check.
type Flag struct {
	raised atomic.Bool
	ctx    context.Context
}

// Watch returns a Flag raised when ctx ends, and a function that releases the watch; call it when
// the work is done. A context that can never end yields a nil Flag.
func Watch(ctx context.Context) (*Flag, func()) {
	if ctx == nil || ctx.Done() == nil {
		return nil, func() {}
	}
	f := &Flag{ctx: ctx}
	if ctx.Err() != nil {
		f.raised.Store(true)
		return f, func() {}
	}
	stop := context.AfterFunc(ctx, func() { f.raised.Store(true) })
	return f, func() { stop() }
}

// Raised reports whether the context has ended.
func (f *Flag) Raised() bool { return f != nil && f.raised.Load() }

// Err is the context's error once the flag is raised, nil before.
func (f *Flag) Err() error {
	if !f.Raised() {
		return nil
	}
	return f.ctx.Err()
}

// Check unwinds the calling goroutine when the context has ended. It must run under Recover (or
// Run) in the same goroutine.
func (f *Flag) Check() {
	if f != nil && f.raised.Load() {
		panic(stopped{f.ctx.Err()})
	}
}

// stopped is the panic value of Check.
type stopped struct{ err error }

// Recover, deferred at an API boundary, turns the unwinding started by Check into *err (the
// context's error). Other panics continue.
func Recover(err *error) {
	if r := recover(); r != nil {
		s, ok := r.(stopped)
		if !ok {
			panic(r)
		}
		*err = s.err
	}
}

// Run calls fn and reports whether Check stopped it; for worker goroutines, whose unwinding must
// end inside them. Other panics continue.
func Run(fn func()) (wasStopped bool) {
	var err error
	func() {
		defer Recover(&err)
		fn()
	}()
	return err != nil
}

// Unwind starts the unwinding of Check with err, for a caller that learnt of the end of the
// context from an error (a nested call that returned ctx.Err()) rather than from the flag.
func Unwind(err error) { panic(stopped{err}) }
