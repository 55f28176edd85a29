package plan

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"strings"

	"autoapp/intent/refusal"
)

// ValidateGraph checks an intent's live tasks together: how many there
// are, that every blocked_by and repaid_by names one of them, and that
// blocked_by has no cycle. A cycle is reported once, naming every slug in
// it in the order the blockers run (a → b means a is blocked by b).
func ValidateGraph(tasks []Task) refusal.Problems {
	var ps refusal.Problems
	add := func(field, format string, args ...any) {
		ps = append(ps, refusal.Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}

	if len(tasks) > MaxLiveTasks {
		add("tasks", "an intent holds at most %d live tasks, and this plan has %d; merge small tasks or leave some for a later intent", MaxLiveTasks, len(tasks))
	}

	index := map[string]int{} // slug → the first task with it
	for i, t := range tasks {
		if t.Slug == "" {
			continue
		}
		if j, dup := index[t.Slug]; dup {
			add(fmt.Sprintf("tasks[%d].slug", i), "%q is already the slug of tasks[%d]; each task has its own", t.Slug, j)
			continue
		}
		index[t.Slug] = i
	}

	for i, t := range tasks {
		name := t.Slug
		if name == "" {
			name = fmt.Sprintf("tasks[%d]", i)
		}
		for j, b := range t.BlockedBy {
			if _, ok := index[b]; !ok {
				add(fmt.Sprintf("%s.blocked_by[%d]", name, j), "there is no task %q in this intent; name one of its tasks or drop the blocker", b)
			}
		}
		if t.RepaidBy != "" {
			if _, ok := index[t.RepaidBy]; !ok {
				add(name+".repaid_by", "there is no task %q in this intent; name the task in it that repays the stub", t.RepaidBy)
			}
		}
	}

	for _, walk := range cycles(tasks, index) {
		verb := "form a cycle"
		if len(walk)-1 > len(unique(walk)) {
			verb = "form cycles" // the walk passes some slug twice on its way round
		}
		add("blocked_by", "%s %s", strings.Join(walk, " → "), verb)
	}
	return ps
}

// cycles finds each set of tasks that block one another (a strongly
// connected component of blocked_by) and returns, for each, a closed walk
// along blocked_by through every slug in it, starting and ending at its
// first slug. A simple cycle comes out as itself: a → b → c → a.
func cycles(tasks []Task, index map[string]int) [][]string {
	slugs := make([]string, 0, len(index))
	for s := range index {
		slugs = append(slugs, s)
	}
	slices.Sort(slugs)

	next := map[string][]string{}
	self := map[string]bool{}
	for _, s := range slugs {
		var out []string
		for _, b := range tasks[index[s]].BlockedBy {
			if _, ok := index[b]; ok {
				out = append(out, b)
			}
			if b == s {
				self[s] = true
			}
		}
		slices.Sort(out)
		next[s] = slices.Compact(out)
	}

	// Tarjan's strongly connected components.
	var (
		order   = map[string]int{}
		low     = map[string]int{}
		onStack = map[string]bool{}
		stack   []string
		comps   [][]string
	)
	var visit func(string)
	visit = func(v string) {
		order[v] = len(order)
		low[v] = order[v]
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range next[v] {
			if _, seen := order[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], order[w])
			}
		}
		if low[v] == order[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 || self[v] {
				slices.Sort(comp)
				comps = append(comps, comp)
			}
		}
	}
	for _, s := range slugs {
		if _, seen := order[s]; !seen {
			visit(s)
		}
	}
	slices.SortFunc(comps, func(a, b []string) int { return cmp.Compare(a[0], b[0]) })

	walks := make([][]string, 0, len(comps))
	for _, comp := range comps {
		start := comp[0]
		if len(comp) == 1 {
			walks = append(walks, []string{start, start})
			continue
		}
		in := map[string]bool{}
		for _, s := range comp {
			in[s] = true
		}
		walk := []string{start}
		seen := map[string]bool{start: true}
		cur := start
		for _, target := range comp[1:] {
			if seen[target] {
				continue
			}
			path := shortestPath(cur, target, next, in)
			for _, s := range path {
				seen[s] = true
			}
			walk = append(walk, path...)
			cur = target
		}
		walk = append(walk, shortestPath(cur, start, next, in)...)
		walks = append(walks, walk)
	}
	return walks
}

// shortestPath returns the slugs after from on a shortest blocked_by path
// to to, staying inside in. Within a component such a path always exists.
func shortestPath(from, to string, next map[string][]string, in map[string]bool) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range next[v] {
			if _, seen := prev[w]; seen || !in[w] {
				continue
			}
			prev[w] = v
			if w == to {
				var path []string
				for s := to; s != from; s = prev[s] {
					path = append(path, s)
				}
				slices.Reverse(path)
				return path
			}
			queue = append(queue, w)
		}
	}
	return nil
}

func unique(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// RunOrder is the order tasks run in, and the order the backlog shows
// them: a task comes after every task blocking it; among tasks whose
// blockers are all placed, higher priority first, then by slug. Tasks
// that can never be placed (a cycle, a blocker not among tasks) follow
// the rest, by priority and slug. Pass all of an intent's live tasks, so
// a completed blocker counts as placed. The input is not changed, and
// every task comes back exactly once.
func RunOrder(tasks []Task) []Task {
	remaining := map[string]int{} // slug → tasks with it not yet placed
	for _, t := range tasks {
		remaining[t.Slug]++
	}
	pending := make([]int, len(tasks)) // blockers of each task not yet placed
	waiting := map[string][]int{}      // slug → tasks it blocks, once per listing
	for i, t := range tasks {
		for _, b := range t.BlockedBy {
			pending[i]++
			waiting[b] = append(waiting[b], i)
		}
	}

	ready := &readyTasks{tasks: tasks}
	for i := range tasks {
		if pending[i] == 0 {
			heap.Push(ready, i)
		}
	}
	placed := make([]bool, len(tasks))
	out := make([]Task, 0, len(tasks))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		placed[i] = true
		out = append(out, tasks[i])
		slug := tasks[i].Slug
		if remaining[slug]--; remaining[slug] > 0 {
			continue // a blocker is placed when every task with its slug is
		}
		for _, j := range waiting[slug] {
			if pending[j]--; pending[j] == 0 {
				heap.Push(ready, j)
			}
		}
	}

	var rest []Task
	for i, t := range tasks {
		if !placed[i] {
			rest = append(rest, t)
		}
	}
	slices.SortStableFunc(rest, runsBefore)
	return append(out, rest...)
}

// readyTasks holds the indexes of tasks free to run, the next to run on
// top; equal tasks keep their input order.
type readyTasks struct {
	tasks []Task
	idx   []int
}

func (r *readyTasks) Len() int { return len(r.idx) }
func (r *readyTasks) Less(a, b int) bool {
	i, j := r.idx[a], r.idx[b]
	return cmp.Or(runsBefore(r.tasks[i], r.tasks[j]), cmp.Compare(i, j)) < 0
}
func (r *readyTasks) Swap(a, b int) { r.idx[a], r.idx[b] = r.idx[b], r.idx[a] }
func (r *readyTasks) Push(x any)    { r.idx = append(r.idx, x.(int)) }
func (r *readyTasks) Pop() any {
	x := r.idx[len(r.idx)-1]
	r.idx = r.idx[:len(r.idx)-1]
	return x
}

// runsBefore orders two tasks that are both free to run: priority, then slug.
func runsBefore(a, b Task) int {
	return cmp.Or(cmp.Compare(priorityRank(a.Priority), priorityRank(b.Priority)), cmp.Compare(a.Slug, b.Slug))
}

// priorityRank puts high first; an unknown priority goes last.
func priorityRank(p string) int {
	if i := slices.Index(Priorities, p); i >= 0 {
		return i
	}
	return len(Priorities)
}
