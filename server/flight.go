package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// flightGroup is the daemon's one single-flight: requests asking for the same thing at the same
// time (a layout by file version, an answer by result key) share one computation. An
// autoscaler's replicas, or one caller retrying, often ask at once; without it each would decode
// or check. Built on golang.org/x/sync/singleflight, with these rules on top:
//
//   - the computation runs in its own goroutine under a context of its own, which carries the
//     first asker's values (request ID, peer) but not its deadline or cancellation
//     (context.WithoutCancel), bounded by the server's own deadline (MaxTimeout);
//   - a caller whose own context ends leaves at once with its context's error; the computation
//     goes on for the others, and is cancelled when the last caller has left, so it never runs
//     for no one, and a later caller starts afresh;
//   - a panic in the computation is recovered (singleflight would crash the process) and given
//     to every caller as the error recover returns.
//
// What a computation keeps (a cached layout, a memoized answer) it stores before it returns, so
// a caller that misses both the flight and the cache asks a new question.
type flightGroup struct {
	g       singleflight.Group
	timeout time.Duration                          // the computations' deadline; 0: DefaultMaxTimeout
	onPanic func(ctx context.Context, p any) error // turns a panic into the callers' error

	mu    sync.Mutex
	calls map[string]*flightCall // by key: the callers waiting and the context they share
}

// flightCall is what the callers of one key share: the computation's context and their count.
type flightCall struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiters int
}

// do returns fn's answer for key, computed once for the callers asking at the same time, and
// whether this caller's own fn ran (false: it joined a computation in flight).
func (f *flightGroup) do(ctx context.Context, key string, fn func(ctx context.Context) (any, error)) (v any, err error, ran bool) {
	// A caller whose context has ended starts nothing: below, the select would pick at random
	// between its end and an answer computed in microseconds (a cached layout), and the
	// computation would store what it computed for no one.
	if err := ctx.Err(); err != nil {
		return nil, err, false
	}
	var own bool // set by this caller's fn only, read after its answer arrived
	f.mu.Lock()
	c := f.calls[key]
	if c == nil {
		timeout := f.timeout
		if timeout <= 0 {
			timeout = DefaultMaxTimeout
		}
		c = &flightCall{}
		c.ctx, c.cancel = context.WithTimeout(context.WithoutCancel(ctx), timeout)
		if f.calls == nil {
			f.calls = map[string]*flightCall{}
		}
		f.calls[key] = c
	}
	c.waiters++
	// DoChan under f.mu: joining c and joining the computation in flight happen together, and
	// a computation ends (below) only after dropping c under f.mu.
	ch := f.g.DoChan(key, func() (v any, err error) {
		own = true
		defer func() {
			if p := recover(); p != nil {
				v, err = nil, fmt.Errorf("panic: %v", p)
				if f.onPanic != nil {
					err = f.onPanic(c.ctx, p)
				}
			}
			f.mu.Lock()
			if f.calls[key] == c {
				delete(f.calls, key)
			}
			f.mu.Unlock()
			c.cancel()
		}()
		return fn(c.ctx)
	})
	f.mu.Unlock()
	select {
	case r := <-ch:
		f.leave(key, c, false)
		return r.Val, r.Err, own
	case <-ctx.Done():
		f.leave(key, c, true)
		return nil, ctx.Err(), false
	}
}

// leave is a caller done with c; the last one to leave cancels the computation, and when it
// gave up before the answer, forgets the flight so that a later caller starts afresh.
func (f *flightGroup) leave(key string, c *flightCall, gaveUp bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.waiters--
	if c.waiters > 0 {
		return
	}
	c.cancel()
	if f.calls[key] != c {
		return // its computation has ended; a later one may be in flight for others
	}
	delete(f.calls, key)
	if gaveUp {
		f.g.Forget(key)
	}
}

// waiting is the number of callers waiting for computations (tests).
func (f *flightGroup) waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c.waiters
	}
	return n
}

// open is the number of keys with callers waiting (tests).
func (f *flightGroup) open() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}
