package intent

import (
	"maps"
	"slices"
	"sync"
)

// detailCache keeps the last read of the intents asked for most, each
// with the version its row had (migration 0022 counts every change to an
// intent and its tasks, 0023 to its interventions) and the tier models it
// was derived with: while neither changed, a read is the same as the last
// one, and a page polled every two seconds costs one indexed row instead
// of the whole intent.
type detailCache struct {
	mu sync.Mutex
	m  map[int64]cachedDetail
}

type cachedDetail struct {
	version int64
	tiers   map[string]string
	r       intentRead
}

// intentRead is one read of an intent: its detail and, when asked for,
// its receipts.
type intentRead struct {
	d IntentDetail
	// receipts says pending and applied were read with the detail.
	receipts         bool
	pending, applied []Receipt
}

// detailsKept bounds the cache: the few intents whose pages are open.
const detailsKept = 32

func newDetailCache() *detailCache {
	return &detailCache{m: map[int64]cachedDetail{}}
}

// get answers the read at version with tiers, when it is kept and holds
// the receipts if they are asked for.
func (c *detailCache) get(id, version int64, tiers map[string]string, receipts bool) (intentRead, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || e.version != version || !maps.Equal(e.tiers, tiers) || (receipts && !e.r.receipts) {
		return intentRead{}, false
	}
	return e.r.clone(), true
}

func (c *detailCache) put(id, version int64, tiers map[string]string, r intentRead) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[id]; !ok && len(c.m) >= detailsKept {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[id] = cachedDetail{version: version, tiers: tiers, r: r.clone()}
}

// clone copies what a reader may change in place: the task list, whose
// rows the overview completes with the model each runs on, and the lists
// of receipts, which it joins.
func (r intentRead) clone() intentRead {
	r.d.Tasks = slices.Clone(r.d.Tasks)
	r.pending, r.applied = slices.Clone(r.pending), slices.Clone(r.applied)
	return r
}
