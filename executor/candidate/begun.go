package candidate

import "context"

// Doing is what a cycle or a preview start is doing now, for a page that
// follows it.
type Doing struct {
	// Step is one of DoingBuild, DoingPreview and DoingChecks.
	Step string
	// Stage is the build stage that runs, once one has begun.
	Stage string
	// SharedGo says the build waits for the host to compile the Go
	// standard library every application's builds share.
	SharedGo bool
}

// The steps Doing names.
const (
	DoingBuild   = "build"
	DoingPreview = "preview"
	DoingChecks  = "checks"
)

// Sentence says what is being done, for the person.
func (d Doing) Sentence() string {
	switch {
	case d.Step == DoingBuild && d.SharedGo:
		return "Compiling the Go standard library every application's builds share: only the first build does this, in a minute or two."
	case d.Step == DoingBuild && d.Stage != "":
		return "Running build stage " + d.Stage + "."
	case d.Step == DoingBuild:
		return "Preparing the build."
	case d.Step == DoingPreview:
		return "Starting the preview."
	case d.Step == DoingChecks:
		return "Running the checks."
	}
	return "Getting ready."
}

// Begun is a cycle of the workspace as it is, or a start of the last
// release's preview, that was checked as Cycle and StartPreview check
// before they run anything, and that holds the application's turn until
// Run ends. It lets the owner's action be refused at once and run after.
type Begun struct {
	s *Service
	// j is a cycle's job; nil for a preview start.
	j *job
	// st and unlock are a preview start's.
	st     State
	unlock func()
}

// BeginCycle refuses what Cycle would refuse before it builds (an
// application that does not exist, a sandbox that cannot run, a manifest
// with problems, another build going) and takes the application's turn.
func (s *Service) BeginCycle(ctx context.Context, appID string) (*Begun, error) {
	j, err := s.begin(ctx, appID, By{})
	if err != nil {
		return nil, err
	}
	return &Begun{s: s, j: j}, nil
}

// BeginPreview refuses what StartPreview would refuse before it starts
// anything (another build going, no release yet) and takes the
// application's turn.
func (s *Service) BeginPreview(ctx context.Context, appID string) (*Begun, error) {
	unlock, err := s.lock(appID)
	if err != nil {
		return nil, err
	}
	st, err := s.previewable(appID)
	if err != nil {
		unlock()
		return nil, err
	}
	return &Begun{s: s, st: st, unlock: unlock}, nil
}

// Run does what was begun, telling heard (which may be nil) what it does,
// records it in candidate.json as Cycle or StartPreview do, and gives the
// application's turn back. A preview that would not start is recorded
// and returned as a refusal with its sentence.
func (b *Begun) Run(ctx context.Context, heard func(Doing)) error {
	if b.j != nil {
		defer b.j.end()
		b.j.heard = heard
		_, err := b.s.cycle(ctx, b.j, Change{})
		return err
	}
	defer b.unlock()
	if heard != nil {
		heard(Doing{Step: DoingPreview})
	}
	_, err := b.s.startPreview(ctx, &b.st)
	return err
}
