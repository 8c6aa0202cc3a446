package server

import (
	"container/list"
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/peer"

	"github.com/flinkpreflight/preflight/internal/memmodel"
)

// maxQueuedPerSlot bounds the waiters: a burst longer than this many per slot would wait longer
// than any sensible QueueWait anyway.
const maxQueuedPerSlot = 64

// admission decides what may run now. Two resources: check slots (CPU-bound simulation and
// findings; MaxConcurrent of them) and the memory budget (every request from the moment it knows
// the size of its file until it answers, including uploads still arriving). Decoding holds no
// slot: it is linear, runs only as fast as bytes arrive, and its memory is in the budget, so a
// slow or stalled sender costs memory it was granted, never a slot. A slow reader is another
// matter: a check answered in pieces with its rows (Server.checkSending) runs only as fast as
// its client reads, holding its slot and memory meanwhile, so a send that makes no progress for
// SendIdleTimeout ends it (sendWithin).
//
// Fairness: requests that cannot run at once wait (up to QueueWait, never past their deadline)
// and are served least-loaded peer first, so one peer's burst cannot starve another; and the
// memory held by a peer's uploads still arriving is capped at PeerShare of the budget (a peer's
// first upload is always admitted if it fits the budget at all).
type admission struct {
	cfg   *Config
	cache *layoutCache // evictable memory, counted against the budget
	m     *metrics

	mu        sync.Mutex
	slotsUsed int
	memUsed   int64
	peers     map[string]*peerUse
	waiters   list.List        // *waiter, oldest first
	served    int64            // grants made from the queue
	lastTurn  map[string]int64 // peer → value of served at its last grant from the queue (peers with waiters only)
}

type peerUse struct {
	held int   // grants alive (slots or memory)
	recv int64 // memory held by uploads still arriving
}

type waiter struct {
	peer  string
	slot  bool
	mem   int64
	recv  bool
	ready chan *grant
	elem  *list.Element
}

// grant is what a request holds; release it exactly once (release is idempotent).
type grant struct {
	a        *admission
	peer     string
	slot     bool
	mem      int64
	recv     bool
	released bool
}

func newAdmission(cfg *Config, cache *layoutCache, m *metrics) *admission {
	return &admission{cfg: cfg, cache: cache, m: m, peers: map[string]*peerUse{}, lastTurn: map[string]int64{}}
}

// peerOf names the caller for fairness: the remote IP (ports change per connection).
func peerOf(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	a := p.Addr.String()
	if host, _, err := net.SplitHostPort(a); err == nil {
		return host
	}
	return a
}

// fitsLocked reports whether a request can be granted now. Cached layouts do not count: they give
// way (grantLocked evicts them) to requests.
func (a *admission) fitsLocked(slot bool, mem int64, recv bool, peer string) bool {
	if slot && a.slotsUsed >= a.cfg.MaxConcurrent {
		return false
	}
	if mem == 0 {
		return true
	}
	if a.memUsed+mem > a.cfg.MemoryBudget {
		return false
	}
	if recv {
		if p := a.peers[peer]; p != nil && p.recv > 0 && p.recv+mem > a.peerShare() {
			return false
		}
	}
	return true
}

// cachePut caches a layout in the room the budget has left, and never beyond CacheBytes.
func (a *admission) cachePut(key string, e cacheValue) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cache.put(key, e, a.cfg.MemoryBudget-a.memUsed)
	a.accountLocked()
}

// resultPut caches a finished answer (memo.go) like cachePut, reporting whether it was kept.
func (a *admission) resultPut(key string, r *memoResult, bytes int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := a.cache.putResult(key, r, bytes, a.cfg.MemoryBudget-a.memUsed)
	a.accountLocked()
	return kept
}

func (a *admission) peerShare() int64 {
	return int64(float64(a.cfg.MemoryBudget) * a.cfg.PeerShare)
}

func (a *admission) grantLocked(peer string, slot bool, mem int64, recv bool) *grant {
	p := a.peers[peer]
	if p == nil {
		p = &peerUse{}
		a.peers[peer] = p
	}
	p.held++
	if slot {
		a.slotsUsed++
		a.m.inflight.Inc()
	}
	a.memUsed += mem
	if recv {
		p.recv += mem
	}
	a.accountLocked()
	return &grant{a: a, peer: peer, slot: slot, mem: mem, recv: recv}
}

// acquire waits for a slot (if slot) and mem bytes of the budget, at most QueueWait and never
// past ctx. Refusals are a *BudgetError at once if mem can never fit, a *BusyError if the server
// is merely busy; a caller gone while waiting gets its context's status.
func (a *admission) acquire(ctx context.Context, slot bool, mem int64, recv bool) (*grant, error) {
	peer := peerOf(ctx)
	if mem > a.cfg.MemoryBudget {
		return nil, &BudgetError{
			What: fmt.Sprintf("this request needs an estimated %s of memory (%s + %d × the _metadata size)",
				fmtBytes(mem), fmtBytes(memmodel.RequestBaseBytes), memmodel.PerFileByte),
			Need: mem, Budget: a.cfg.MemoryBudget,
		}
	}
	a.mu.Lock()
	if a.waiters.Len() == 0 && a.fitsLocked(slot, mem, recv, peer) {
		g := a.grantLocked(peer, slot, mem, recv)
		a.mu.Unlock()
		return g, nil
	}
	if a.waiters.Len() >= maxQueuedPerSlot*a.cfg.MaxConcurrent || a.cfg.QueueWait <= 0 {
		a.mu.Unlock()
		return nil, a.busy(slot, mem)
	}
	w := &waiter{peer: peer, slot: slot, mem: mem, recv: recv, ready: make(chan *grant, 1)}
	w.elem = a.waiters.PushBack(w)
	a.m.queued.Inc()
	// Others wait for what they need, which need not be what this request needs (a free slot
	// while an upload waits for memory): grant now whatever fits, in fair order.
	a.dispatchLocked()
	a.mu.Unlock()

	t := time.NewTimer(a.cfg.QueueWait)
	defer t.Stop()
	var err error
	select {
	case g := <-w.ready:
		a.m.queued.Dec()
		return g, nil
	case <-ctx.Done():
		err = toStatus(ctx, ctx.Err())
	case <-t.C:
		err = a.busy(slot, mem)
	}
	a.mu.Lock()
	if w.elem != nil {
		a.waiters.Remove(w.elem)
		w.elem = nil
		if a.waiters.Len() == 0 {
			clear(a.lastTurn)
		}
		a.mu.Unlock()
		a.m.queued.Dec()
		return nil, err
	}
	a.mu.Unlock()
	// Granted while giving up: hand it back.
	(<-w.ready).release()
	a.m.queued.Dec()
	return nil, err
}

// busy is the refusal of a request that would fit an idle server (*BusyError).
func (a *admission) busy(slot bool, mem int64) error {
	a.mu.Lock()
	used, slots, cached := a.memUsed, a.slotsUsed, a.cache.size()
	a.mu.Unlock()
	what := fmt.Sprintf("all %d check slots in use (--max-concurrent)", a.cfg.MaxConcurrent)
	if !slot || slots < a.cfg.MaxConcurrent {
		what = fmt.Sprintf("memory budget of %s (--memory-budget) in use: %s reserved by requests, %s by cached layouts; this request needs %s",
			fmtBytes(a.cfg.MemoryBudget), fmtBytes(used), fmtBytes(cached), fmtBytes(mem))
	}
	return &BusyError{Waited: a.cfg.QueueWait, What: what, RetryAfter: time.Second}
}

// dispatchLocked grants waiters that fit now: the peer holding least first, then the peer whose
// turn is longest ago (round robin among peers that hold the same), then the oldest.
func (a *admission) dispatchLocked() {
	for a.waiters.Len() > 0 {
		var best *waiter
		for e := a.waiters.Front(); e != nil; e = e.Next() {
			w := e.Value.(*waiter)
			if best != nil && !a.before(w, best) {
				continue
			}
			if a.fitsLocked(w.slot, w.mem, w.recv, w.peer) {
				best = w
			}
		}
		if best == nil {
			return
		}
		a.waiters.Remove(best.elem)
		best.elem = nil
		a.served++
		a.lastTurn[best.peer] = a.served
		best.ready <- a.grantLocked(best.peer, best.slot, best.mem, best.recv)
	}
	// Forget the turns of peers no longer waiting (the map stays as small as the queue).
	clear(a.lastTurn)
}

// before orders waiters from different peers (a later waiter is never before an earlier one of
// the same standing).
func (a *admission) before(w, than *waiter) bool {
	if lw, lt := a.load(w.peer), a.load(than.peer); lw != lt {
		return lw < lt
	}
	return a.lastTurn[w.peer] < a.lastTurn[than.peer]
}

func (a *admission) load(peer string) int {
	if p := a.peers[peer]; p != nil {
		return p.held
	}
	return 0
}

// release returns everything g holds.
func (g *grant) release() {
	if g == nil {
		return
	}
	a := g.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if g.released {
		return
	}
	g.released = true
	if g.slot {
		a.slotsUsed--
		a.m.inflight.Dec()
	}
	a.memUsed -= g.mem
	a.accountLocked()
	if p := a.peers[g.peer]; p != nil {
		p.held--
		if g.recv {
			p.recv -= g.mem
		}
		if p.held == 0 {
			delete(a.peers, g.peer)
		}
	}
	a.dispatchLocked()
}

// grow raises g's memory to mem bytes without waiting (an upload of unknown size, or one reading
// past what it announced): a *BudgetError (Growing) if it does not fit now.
func (g *grant) grow(mem int64) error {
	a := g.a
	a.mu.Lock()
	defer a.mu.Unlock()
	extra := mem - g.mem
	if extra <= 0 || g.released {
		return nil
	}
	if mem > a.cfg.MemoryBudget || !a.fitsLocked(false, extra, g.recv, g.peer) {
		return &BudgetError{
			What: fmt.Sprintf("upload needs an estimated %s of memory (%s + %d × its size so far)",
				fmtBytes(mem), fmtBytes(memmodel.RequestBaseBytes), memmodel.PerFileByte),
			Need: mem, Budget: a.cfg.MemoryBudget, Growing: true,
		}
	}
	a.memUsed += extra
	g.mem = mem
	if g.recv {
		a.peers[g.peer].recv += extra
	}
	a.accountLocked()
	return nil
}

// received marks an upload as fully arrived: its memory no longer counts against the peer's share
// of arriving uploads (it still counts against the budget).
func (g *grant) received() {
	a := g.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if g.recv && !g.released {
		a.peers[g.peer].recv -= g.mem
		g.recv = false
		a.dispatchLocked()
	}
}

// accountLocked evicts cached layouts that no longer fit beside the reservations, and updates
// the gauges and Config.OnReserved.
func (a *admission) accountLocked() {
	a.cache.shrinkTo(a.cfg.MemoryBudget - a.memUsed)
	a.m.memReserved.Set(float64(a.memUsed))
	layouts, results := a.cache.sizes()
	a.m.cacheBytes.Set(float64(layouts))
	a.m.resultCacheBytes.Set(float64(results))
	if a.cfg.OnReserved != nil {
		a.cfg.OnReserved(a.memUsed + layouts + results)
	}
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
