package sandbox

import (
	"strings"
	"testing"
)

// TestAMachineWithoutBubblewrapCannotConfineAndSaysWhy probes with a PATH
// that holds no bwrap: the machine confines nothing, and says what to
// install.
func TestAMachineWithoutBubblewrapCannotConfineAndSaysWhy(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	m := probe()
	if m.Confines() || !strings.Contains(m.Why, "bubblewrap is not installed") {
		t.Fatalf("probe = %+v, want no sandbox and a sentence naming bubblewrap", m)
	}
	st := State{Machine: m}
	if !st.Refused() || !strings.Contains(st.Sentence(), "bubblewrap") {
		t.Errorf("State = %q, want nothing run and bubblewrap named", st.Sentence())
	}
}
