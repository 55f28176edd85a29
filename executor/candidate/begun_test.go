package candidate_test

import (
	"context"
	"slices"
	"testing"

	"autoapp/executor/candidate"
)

func TestABegunCycleHoldsTheTurnAndTellsWhatItDoes(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	ctx := context.Background()
	b, err := h.candidates.BeginCycle(ctx, "site")
	if err != nil {
		t.Fatal(err)
	}
	const busy = "A build or check of site is already running; wait for it to end."
	if _, err := h.candidates.BeginCycle(ctx, "site"); err == nil || err.Error() != busy {
		t.Fatalf("a second begin answered %v, want %q", err, busy)
	}
	if _, err := h.candidates.Cycle(ctx, "site", candidate.Change{}); err == nil || err.Error() != busy {
		t.Fatalf("a cycle beside it answered %v, want %q", err, busy)
	}

	var told []string
	if err := b.Run(ctx, func(d candidate.Doing) { told = append(told, d.Sentence()) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"Preparing the build.", "Running build stage check.", "Starting the preview.", "Running the checks."}
	if !slices.Equal(told, want) {
		t.Fatalf("it told %q, want %q", told, want)
	}
	st, err := h.candidates.State("site")
	if err != nil {
		t.Fatal(err)
	}
	if st.Cycle == nil || st.Cycle.Step != candidate.StepChecked || st.Checks == nil || st.Checks.Passed != 1 {
		t.Fatalf("the begun cycle recorded %+v", st.Cycle)
	}
	// The turn is given back.
	if _, err := h.candidates.BeginPreview(ctx, "site"); err != nil {
		t.Fatalf("after the run, a preview start is refused: %v", err)
	}
}

func TestABegunPreviewNeedsARelease(t *testing.T) {
	h := newHost(t, t.TempDir())
	h.create(t, "site", "static")
	_, err := h.candidates.BeginPreview(context.Background(), "site")
	if want := "There is no release to preview yet: build it first."; err == nil || err.Error() != want {
		t.Fatalf("answered %v, want %q", err, want)
	}
	// A refused begin holds nothing.
	if _, err := h.candidates.BeginCycle(context.Background(), "site"); err != nil {
		t.Fatal(err)
	}
}
