package server

import (
	"container/list"
	"sync"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// layoutCache holds two LRUs under one byte count: decoded layouts keyed by
// source.Object.CacheKey, so that an autoscaler probing several parallelisms against one
// checkpoint decodes it once, and finished CheckRescale answers (memo.go) keyed by that CacheKey
// plus the request, so that the same question asked again costs a map lookup. Both are shared
// read-only between requests. Together they are bounded in bytes (each value's measured size), by
// CacheBytes and by what the memory budget leaves beside running requests (admission evicts from
// them to make room, least recently used first across both); layouts are also bounded in entries
// and results in their own bytes (ResultCacheBytes), so that many small answers cannot push out
// the layouts they were computed from.
type layoutCache struct {
	mu             sync.Mutex
	max            int    // layout entries; <= 0 disables the layout cache
	maxBytes       int64  // bytes of layouts and results together
	maxResultBytes int64  // bytes of results; <= 0 disables the result cache
	clock          uint64 // use stamps, to compare recency across the two lists
	layouts        lruList[cacheValue]
	results        lruList[*memoResult]
	onEvictResult  func(*memoResult)
}

// cacheValue is a cached layout and its measured size.
type cacheValue struct {
	layout *checkpoint.Layout
	bytes  int64
}

func newLayoutCache(max int, maxBytes int64) *layoutCache {
	c := &layoutCache{max: max, maxBytes: maxBytes, layouts: newLRUList[cacheValue](nil)}
	c.results = newLRUList(func(r *memoResult) {
		if c.onEvictResult != nil {
			c.onEvictResult(r)
		}
	})
	return c
}

func (c *layoutCache) get(key string) (cacheValue, bool) {
	if c.max <= 0 || key == "" {
		return cacheValue{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.layouts.byKey[key]; ok {
		return touchLocked(c, &c.layouts, e), true
	}
	return cacheValue{}, false
}

// getResult looks a memoized answer up. The key is a []byte so that the lookup does not copy it
// (the map index with string(key) does not allocate).
func (c *layoutCache) getResult(key []byte) (*memoResult, bool) {
	if c.maxResultBytes <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.results.byKey[string(key)]; ok {
		return touchLocked(c, &c.results, e), true
	}
	return nil, false
}

func touchLocked[V any](c *layoutCache, l *lruList[V], e *list.Element) V {
	ce := l.touch(e)
	c.clock++
	ce.used = c.clock
	return ce.v
}

// put caches v if it fits in min(maxBytes, room) bytes, evicting the least recently used.
func (c *layoutCache) put(key string, v cacheValue, room int64) {
	if c.max <= 0 || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	addLocked(c, &c.layouts, key, v, v.bytes, room)
}

// putResult caches a finished answer of the given measured size under the same rules as put,
// and within maxResultBytes. It reports whether r stays cached.
func (c *layoutCache) putResult(key string, r *memoResult, bytes, room int64) bool {
	if c.maxResultBytes <= 0 || key == "" || bytes > c.maxResultBytes {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	addLocked(c, &c.results, key, r, bytes, room)
	e, ok := c.results.byKey[key]
	return ok && e.Value.(*lruEntry[*memoResult]).v == r
}

func addLocked[V any](c *layoutCache, l *lruList[V], key string, v V, bytes, room int64) {
	limit := min(c.maxBytes, room)
	if bytes > limit {
		return
	}
	c.clock++
	l.add(&lruEntry[V]{key: key, v: v, bytes: bytes, used: c.clock})
	c.evictLocked(limit)
}

// shrinkTo evicts until the cache holds at most limit bytes.
func (c *layoutCache) shrinkTo(limit int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked(limit)
}

func (c *layoutCache) evictLocked(limit int64) {
	for c.layouts.bytes+c.results.bytes > limit {
		lo, ro := c.layouts.oldest(), c.results.oldest()
		switch {
		case lo == nil && ro == nil:
			return
		case ro == nil || (lo != nil && lo.used < ro.used):
			c.layouts.removeOldest()
		default:
			c.results.removeOldest()
		}
	}
	for c.layouts.len() > max(c.max, 0) {
		c.layouts.removeOldest()
	}
	for c.results.bytes > max(c.maxResultBytes, 0) {
		c.results.removeOldest()
	}
}

// size is the bytes held by layouts and results together (what counts against the budget).
func (c *layoutCache) size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.layouts.bytes + c.results.bytes
}

// sizes splits size into layouts and results (the gauges).
func (c *layoutCache) sizes() (layouts, results int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.layouts.bytes, c.results.bytes
}

// len is the number of cached layouts.
func (c *layoutCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.layouts.len()
}

// resultLen is the number of cached results.
func (c *layoutCache) resultLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.results.len()
}

// sourceIdentities remembers, per requested URI, which version of which file the source last
// opened (its CacheKey: location + size + mtime or ETag) and when. Within Interval of that check a
// request for the same URI trusts it and skips the source (a stat and an open through os.Root, or
// an object store's HEAD) when the layout or the answer is cached. This is the staleness bound:
// a file replaced or removed at time t is noticed by every request that starts after the last
// check + Interval, so at most Interval after t; requests in between may still be answered from
// the previous version. The allowlist is fixed for the server's life, so skipping the source
// cannot admit a URI it would refuse; a symlink re-pointed within the interval is followed at
// the next check, like any other change.
type sourceIdentities struct {
	interval time.Duration // <= 0: never trusted, every request asks the source
	mu       sync.RWMutex
	byURI    map[string]sourceIdentity
}

// sourceIdentity is what an open of a URI found.
type sourceIdentity struct {
	uri      string // the location read (source.Object.URI): the report's label
	cacheKey string
	checked  time.Time
}

const (
	// maxIdentities bounds the remembered URIs; beyond it the expired ones are dropped, and
	// then all of them (they are only a shortcut).
	maxIdentities = 4096
	// maxIdentityURI leaves absurdly long URIs out of the map.
	maxIdentityURI = 4096
)

func newSourceIdentities(interval time.Duration) *sourceIdentities {
	return &sourceIdentities{interval: interval, byURI: map[string]sourceIdentity{}}
}

// fresh returns the identity of uri if it was checked less than interval ago.
func (s *sourceIdentities) fresh(uri string, now time.Time) (sourceIdentity, bool) {
	if s.interval <= 0 {
		return sourceIdentity{}, false
	}
	s.mu.RLock()
	id, ok := s.byURI[uri]
	s.mu.RUnlock()
	if !ok || now.Sub(id.checked) >= s.interval || now.Before(id.checked) {
		return sourceIdentity{}, false
	}
	return id, true
}

// record notes what an open of uri found at time id.checked.
func (s *sourceIdentities) record(uri string, id sourceIdentity) {
	if s.interval <= 0 || id.cacheKey == "" || len(uri) > maxIdentityURI {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byURI[uri]; !ok && len(s.byURI) >= maxIdentities {
		for k, v := range s.byURI {
			if id.checked.Sub(v.checked) >= s.interval {
				delete(s.byURI, k)
			}
		}
		if len(s.byURI) >= maxIdentities {
			clear(s.byURI)
		}
	}
	s.byURI[uri] = id
}

// forget drops uri after a failed open, so the next request asks the source again.
func (s *sourceIdentities) forget(uri string) {
	if s.interval <= 0 {
		return
	}
	s.mu.Lock()
	delete(s.byURI, uri)
	s.mu.Unlock()
}
