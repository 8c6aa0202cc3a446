package server

import (
	"container/list"
	"sync"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// layoutCache is a small LRU of decoded layouts keyed by source.Object.CacheKey, so that an
// autoscaler probing several parallelisms against one checkpoint decodes it once. Layouts are
// shared read-only between requests. It is bounded in bytes (each layout's measured size), by
// CacheBytes and by what the memory budget leaves beside running requests (admission evicts from
// it to make room), and in entries.
type layoutCache struct {
	mu       sync.Mutex
	max      int   // entries; <= 0 disables the cache
	maxBytes int64 // bytes
	bytes    int64
	order    *list.List // front = most recent; values are *cacheEntry
	byKey    map[string]*list.Element
}

// cacheValue is a cached layout and its measured size.
type cacheValue struct {
	layout *checkpoint.Layout
	bytes  int64
}

type cacheEntry struct {
	key string
	cacheValue
}

func newLayoutCache(max int, maxBytes int64) *layoutCache {
	return &layoutCache{max: max, maxBytes: maxBytes, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *layoutCache) get(key string) (cacheValue, bool) {
	if c.max <= 0 || key == "" {
		return cacheValue{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cacheEntry).cacheValue, true
	}
	return cacheValue{}, false
}

// put caches v if it fits in min(maxBytes, room) bytes, evicting the least recently used.
func (c *layoutCache) put(key string, v cacheValue, room int64) {
	if c.max <= 0 || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := min(c.maxBytes, room)
	if v.bytes > limit {
		return
	}
	if e, ok := c.byKey[key]; ok {
		c.removeLocked(e)
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key, v})
	c.bytes += v.bytes
	c.evictLocked(limit)
}

// shrinkTo evicts until the cache holds at most limit bytes.
func (c *layoutCache) shrinkTo(limit int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked(limit)
}

func (c *layoutCache) evictLocked(limit int64) {
	for c.order.Len() > 0 && (c.bytes > limit || c.order.Len() > c.max) {
		c.removeLocked(c.order.Back())
	}
}

func (c *layoutCache) removeLocked(e *list.Element) {
	ce := c.order.Remove(e).(*cacheEntry)
	delete(c.byKey, ce.key)
	c.bytes -= ce.bytes
}

func (c *layoutCache) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

func (c *layoutCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
