package server

import (
	"container/list"
	"sync"
)

// lruList is one recency list with its index and the bytes of its entries: the common part of
// the layout and result caches (cache.go) and of the job-code caches (boundedLRU). It does not
// lock and does not decide what to evict; its owner does both.
type lruList[V any] struct {
	order    *list.List // front = most recent; values are *lruEntry[V]
	byKey    map[string]*list.Element
	bytes    int64
	onRemove func(V) // nil, or told of every entry that leaves (evicted or replaced)
}

type lruEntry[V any] struct {
	key   string
	v     V
	bytes int64
	used  uint64 // the owner's use stamp, to compare recency across lists
}

func newLRUList[V any](onRemove func(V)) lruList[V] {
	return lruList[V]{order: list.New(), byKey: map[string]*list.Element{}, onRemove: onRemove}
}

// touch makes e the most recent entry.
func (l *lruList[V]) touch(e *list.Element) *lruEntry[V] {
	l.order.MoveToFront(e)
	return e.Value.(*lruEntry[V])
}

// add puts ce in front, replacing the entry of the same key.
func (l *lruList[V]) add(ce *lruEntry[V]) {
	l.delete(ce.key)
	l.byKey[ce.key] = l.order.PushFront(ce)
	l.bytes += ce.bytes
}

// delete removes the entry of key, if any.
func (l *lruList[V]) delete(key string) {
	if e, ok := l.byKey[key]; ok {
		l.remove(e)
	}
}

func (l *lruList[V]) remove(e *list.Element) {
	ce := l.order.Remove(e).(*lruEntry[V])
	delete(l.byKey, ce.key)
	l.bytes -= ce.bytes
	if l.onRemove != nil {
		l.onRemove(ce.v)
	}
}

// removeOldest removes the least recently used entry; the list must not be empty.
func (l *lruList[V]) removeOldest() { l.remove(l.order.Back()) }

// oldest is the least recently used entry, or nil.
func (l *lruList[V]) oldest() *lruEntry[V] {
	if e := l.order.Back(); e != nil {
		return e.Value.(*lruEntry[V])
	}
	return nil
}

func (l *lruList[V]) len() int { return l.order.Len() }

// boundedLRU is a least-recently-used map of at most max entries and maxBytes estimated bytes.
type boundedLRU[V any] struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	l        lruList[V]
}

func newBoundedLRU[V any](max int, maxBytes int64) *boundedLRU[V] {
	return &boundedLRU[V]{max: max, maxBytes: maxBytes, l: newLRUList[V](nil)}
}

func (c *boundedLRU[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.l.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	return c.l.touch(e).v, true
}

// put keeps v (of the given estimated bytes), evicting the least recently used entries beyond
// the bounds; a value larger than maxBytes is not kept.
func (c *boundedLRU[V]) put(key string, v V, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.l.delete(key)
	if bytes > c.maxBytes {
		return
	}
	c.l.add(&lruEntry[V]{key: key, v: v, bytes: bytes})
	for c.l.len() > c.max || c.l.bytes > c.maxBytes {
		c.l.removeOldest()
	}
}
