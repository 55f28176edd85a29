package gocache

import "testing"

// TestCommandQuotesWhatGoWouldSplit writes GOCACHEPROG for paths a real
// owner has (a space in a folder's name, a quote in one) as cmd/go reads
// it back: split on spaces, '…' or "…" taken whole.
func TestCommandQuotesWhatGoWouldSplit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"/usr/local/bin/autoapp", Flag, "/srv/apps/notes/cache/go-objects"}, "/usr/local/bin/autoapp " + Flag + " /srv/apps/notes/cache/go-objects", true},
		{[]string{"/home/me/My Apps/autoapp", Flag}, "'/home/me/My Apps/autoapp' " + Flag, true},
		{[]string{"/home/me/Bob's apps/autoapp"}, `"/home/me/Bob's apps/autoapp"`, true},
		{[]string{"/home/me/it's/autoapp"}, "/home/me/it's/autoapp", true},
		{[]string{`/home/me/"Bob's" apps/autoapp`}, "", false},
	} {
		got, ok := command(tc.args...)
		if got != tc.want || ok != tc.ok {
			t.Errorf("command(%q) = %q, %v; want %q, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}
