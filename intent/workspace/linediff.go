package workspace

import "bytes"

// lineChanges counts the lines a change from a to b inserts and deletes,
// as git's diff stat does for a text file: lines compared whole, their
// ends included (a last line without one differs from the same line with
// one), and the fewest insertions and deletions that make b of a (Myers'
// algorithm). ok is false when the change is too large to count at a
// small cost; git is asked then.
func lineChanges(a, b []byte) (ins, del int, ok bool) {
	x, y := splitLines(a), splitLines(b)
	for len(x) > 0 && len(y) > 0 && bytes.Equal(x[0], y[0]) {
		x, y = x[1:], y[1:]
	}
	for len(x) > 0 && len(y) > 0 && bytes.Equal(x[len(x)-1], y[len(y)-1]) {
		x, y = x[:len(x)-1], y[:len(y)-1]
	}
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return m, n, true
	}
	// Lines as numbers, so the walk compares integers.
	ids := map[string]int{}
	num := func(lines [][]byte) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, seen := ids[string(l)]
			if !seen {
				id = len(ids)
				ids[string(l)] = id
			}
			out[i] = id
		}
		return out
	}
	xs, ys := num(x), num(y)
	// The walk costs about (n+m) steps for each difference d: at most a
	// few tens of milliseconds.
	const budget = 20_000_000
	maxD := n + m
	v := make([]int, 2*maxD+2)
	off := maxD + 1
	for d := 0; d <= maxD; d++ {
		if d*(n+m) > budget {
			return 0, 0, false
		}
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && xs[i] == ys[j] {
				i, j = i+1, j+1
			}
			v[off+k] = i
			if i >= n && j >= m {
				common := (n + m - d) / 2
				return m - common, n - common, true
			}
		}
	}
	return m, n, true
}

// splitLines cuts b after each newline; a last line without one is a
// line too.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, b)
			break
		}
		lines = append(lines, b[:i+1])
		b = b[i+1:]
	}
	return lines
}
