package intent

import (
	"maps"
	"slices"
	"sync"
)

// detailCache keeps the last read of the intents asked for most, each
// with the version its row had (migration 0022 counts every change to an
// intent and its tasks) and the tier models it was derived with: while
// neither changed, a read is the same as the last one, and a page polled
// every two seconds costs one indexed row instead of the whole intent.
type detailCache struct {
	mu sync.Mutex
	m  map[int64]cachedDetail
}

type cachedDetail struct {
	version int64
	tiers   map[string]string
	d       IntentDetail
}

// detailsKept bounds the cache: the few intents whose pages are open.
const detailsKept = 32

func newDetailCache() *detailCache {
	return &detailCache{m: map[int64]cachedDetail{}}
}

// get answers the detail read at version with tiers, when it is kept.
func (c *detailCache) get(id, version int64, tiers map[string]string) (IntentDetail, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || e.version != version || !maps.Equal(e.tiers, tiers) {
		return IntentDetail{}, false
	}
	return e.d.clone(), true
}

func (c *detailCache) put(id, version int64, tiers map[string]string, d IntentDetail) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok && len(c.m) >= detailsKept {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[id] = cachedDetail{version: version, tiers: tiers, d: d.clone()}
}

// clone copies what a reader may change in place: the task list, whose
// rows the overview completes with the model each runs on.
func (d IntentDetail) clone() IntentDetail {
	d.Tasks = slices.Clone(d.Tasks)
	return d
}
