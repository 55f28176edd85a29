package knowledge_test

import (
	"context"
	"testing"

	"autoapp/knowledge"
)

// BenchmarkLogView reads the Log view's first page (the 200 newest) over
// 100,000 events, unfiltered and with each filter the page offers.
func BenchmarkLogView(b *testing.B) {
	e := mustOpen(b)
	const n = 100_000
	// Mostly info, some debug, few warnings and fewer errors, over ten apps
	// and lines with no application.
	levels := []string{"info", "info", "info", "info", "info", "info", "debug", "debug", "warn", "info",
		"info", "info", "info", "debug", "info", "info", "info", "warn", "info", "error"}
	tx, err := e.store.DB().Write.Beginx()
	if err != nil {
		b.Fatal(err)
	}
	at := e.clock.Now().Add(-n * 1000 * 1000 * 10).UnixMilli() // 10 ms apart, ending now
	for i := range n {
		var app any
		if i%11 != 0 {
			app = "app-" + string(rune('a'+i%10))
		}
		if _, err := tx.Exec(`INSERT INTO events (at, level, message, run_id, app_id, attrs) VALUES (?, ?, ?, ?, ?, ?)`,
			at+int64(i)*10, levels[i%len(levels)], "preview started on its own port", "run-1", app, `{"port":4312,"pid":991}`); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		name string
		q    knowledge.LogQuery
		none bool
	}{
		{"newest", knowledge.LogQuery{}, false},
		{"level=info", knowledge.LogQuery{Level: "info"}, false},
		{"level=warn", knowledge.LogQuery{Level: "warn"}, false},
		{"level=error", knowledge.LogQuery{Level: "error"}, false},
		{"app", knowledge.LogQuery{AppID: "app-c"}, false},
		{"app+level=warn", knowledge.LogQuery{AppID: "app-h", Level: "warn"}, false},
		{"app+level=error", knowledge.LogQuery{AppID: "app-j", Level: "error"}, false},
		// app-c has no warnings or errors: the worst case, every one of its
		// events read to find none.
		{"app+level=warn, none there", knowledge.LogQuery{AppID: "app-c", Level: "warn"}, true},
	}
	for _, c := range cases {
		c.q.Limit = 200
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got, err := e.store.Log(ctx, c.q)
				if err != nil {
					b.Fatal(err)
				}
				if (len(got) == 0) != c.none {
					b.Fatalf("a page of %d events", len(got))
				}
			}
		})
	}
}
