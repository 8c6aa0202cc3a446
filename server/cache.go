package server

import (
	"container/list"
	"sync"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// layoutCache is a small LRU of decoded layouts keyed by source.Object.CacheKey, so that an
// autoscaler probing several parallelisms against one checkpoint decodes it once. Layouts are
// shared read-only between requests.
type layoutCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recent; values are *cacheEntry
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key    string
	layout *checkpoint.Layout
}

func newLayoutCache(max int) *layoutCache {
	return &layoutCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *layoutCache) get(key string) (*checkpoint.Layout, bool) {
	if c.max <= 0 || key == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*cacheEntry).layout, true
	}
	return nil, false
}

func (c *layoutCache) put(key string, l *checkpoint.Layout) {
	if c.max <= 0 || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		e.Value.(*cacheEntry).layout = l
		c.order.MoveToFront(e)
		return
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key, l})
	for c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.byKey, old.Value.(*cacheEntry).key)
	}
}

func (c *layoutCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
