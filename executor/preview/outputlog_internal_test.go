package preview

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestAPreviewsOutputReachesTheLogALineAtATimeUpToItsCap(t *testing.T) {
	var buf bytes.Buffer
	o := &outputLog{log: slog.New(slog.NewTextHandler(&buf, nil)), preview: "site"}
	o.Write([]byte("first li"))
	o.Write([]byte("ne\r\nsecond line\n"))
	if got := buf.String(); !strings.Contains(got, `msg="first line" preview=site`) || !strings.Contains(got, `msg="second line"`) {
		t.Fatalf("the lines were not logged one by one:\n%s", got)
	}
	for i := 0; i < maxLoggedLines+50; i++ {
		o.Write([]byte("again\n"))
	}
	if n := strings.Count(buf.String(), "msg=again"); n != maxLoggedLines-3 {
		t.Fatalf("%d lines logged, want the cap of %d in all", n+2, maxLoggedLines-1)
	}
	if strings.Count(buf.String(), "cut here") != 1 {
		t.Fatal("the cut is not said exactly once")
	}
}
