package handlers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// slowManifest builds the static template after a first stage that sleeps
// for the seconds given, and previews it as the template does.
func slowManifest(seconds string) string {
	return `{"name": "Notes", "build": [
		{"name": "slow", "command": ["sh", "-c", "echo waiting; sleep ` + seconds + `"], "timeout": "1m"},
		{"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "20s"}],
	"preview": {"static": "site"}, "acceptance": "acceptance/"}`
}

// withManifest is withApp with the application's manifest replaced.
func withManifest(t *testing.T, manifest string) (*server, *browser) {
	t.Helper()
	s, ada := withApp(t)
	if err := s.apps.SaveManifest(context.Background(), appID, []byte(manifest)); err != nil {
		t.Fatal(err)
	}
	return s, ada
}

// postAtOnce posts an action of the application's page and checks it
// answered well before the work it starts could have ended.
func postAtOnce(t *testing.T, b *browser, target string, within time.Duration) *response {
	t.Helper()
	began := time.Now()
	r := b.post(target, nil)
	if took := time.Since(began); took > within {
		t.Fatalf("POST %s answered after %s, want at once (within %s)", target, took.Round(time.Millisecond), within)
	}
	return r
}

// appLive is the polled part of the application's page.
func appLive(t testing.TB, b *browser) *response {
	t.Helper()
	r := b.get("/apps/"+appID+"/live", "HX-Request", "true")
	wantStatus(t, r, fiber.StatusOK)
	return r
}

// waitLive asks for the polled part until it says text, as the page does
// every two seconds, and answers it.
func waitLive(t testing.TB, b *browser, text string, within time.Duration) *response {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := appLive(t, b)
		if strings.Contains(r.body, text) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("within %s the application's live part never said %q; it says: %.3000s", within, text, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ended waits until the polled part stops polling.
func ended(t testing.TB, b *browser, within time.Duration) *response {
	t.Helper()
	r := waitLive(t, b, `data-polling="false"`, within)
	wantAppPolling(t, r, false)
	return r
}

// wantAppPolling checks the live part of the application's page asks
// again every two seconds, or renders without the trigger.
func wantAppPolling(t testing.TB, r *response, want bool) {
	t.Helper()
	live := element(t, r, `<div id="app-live"`, ">")
	polls := strings.Contains(live, `hx-trigger="every 2s"`) && strings.Contains(live, `hx-get="/apps/`+appID+`/live"`)
	flag := strings.Contains(live, `data-polling="true"`)
	if polls != want || flag != want {
		t.Fatalf("the live part %s; want polling %v", live, want)
	}
	if !want && strings.Contains(r.body, "hx-trigger") {
		t.Fatal("a trigger is left elsewhere, so something still polls")
	}
}

func TestBuildAndCheckAnswersAtOnceAndThePageFollowsIt(t *testing.T) {
	t.Parallel()
	_, ada := withManifest(t, slowManifest("5"))
	wantAppPolling(t, ada.get("/apps/"+appID), false)

	r := postAtOnce(t, ada, "/apps/"+appID+"/cycle", 2*time.Second)
	wantRedirect(t, r, "/apps/"+appID+"#candidate")

	page := ada.get("/apps/" + appID)
	wantStatus(t, page, fiber.StatusOK)
	wantAppPolling(t, page, true)
	wantWithin(t, element(t, page, `data-testid="candidate-going"`, "</p>"), "Build and check")
	if strings.Contains(page.body, `data-testid="cycle"`) {
		t.Error("the page offers Build and check while one goes")
	}

	live := waitLive(t, ada, "Running build stage slow.", 5*time.Second)
	wantAppPolling(t, live, true)

	t.Run("a second one is refused while it goes", func(t *testing.T) {
		r := ada.post("/apps/"+appID+"/cycle", nil)
		wantStatus(t, r, fiber.StatusConflict)
		wantText(t, r, "A build or check of notes is already running; wait for it to end.")
	})

	done := ended(t, ada, 30*time.Second)
	wantSentence(t, done, "Passed 1 of 1.")
	wantSentence(t, done, `data-testid="preview-running"`)
	wantSentence(t, done, "Stages run: slow, check.")
	if strings.Contains(done.body, `data-testid="candidate-going"`) {
		t.Error("the ended build and check is still shown going")
	}
	release := find(t, done, releasePattern, "release")

	t.Run("its result stays on the page", func(t *testing.T) {
		page := ada.get("/apps/" + appID)
		wantAppPolling(t, page, false)
		wantSentence(t, page, "Built <code>"+release+"</code>")
		wantSentence(t, page, "Passed 1 of 1.")
	})
}

func TestStartPreviewAnswersAtOnceAndThePageFollowsIt(t *testing.T) {
	t.Parallel()
	// A preview that never answers: its start waits the whole startTimeout.
	_, ada := withManifest(t, `{"name": "Notes",
		"build": [{"name": "check", "command": ["test", "-s", "site/index.html"], "timeout": "20s"}],
		"preview": {"command": ["sh", "-c", "echo warming up; sleep 30"], "startTimeout": "3s"},
		"acceptance": "acceptance/"}`)
	wantRedirect(t, postAtOnce(t, ada, "/apps/"+appID+"/cycle", 1500*time.Millisecond), "/apps/"+appID+"#candidate")
	waitLive(t, ada, "Starting the preview.", 10*time.Second)
	r := ended(t, ada, 30*time.Second)
	wantSentence(t, r, "Next: Make the preview start: The preview did not answer on port")

	wantRedirect(t, postAtOnce(t, ada, "/apps/"+appID+"/preview/start", 1500*time.Millisecond), "/apps/"+appID+"#candidate")
	going := appLive(t, ada)
	wantAppPolling(t, going, true)
	wantWithin(t, element(t, going, `data-testid="candidate-going"`, "</p>"), "Start preview")
	r = ended(t, ada, 30*time.Second)
	wantWithin(t, element(t, r, `data-testid="preview-note"`, "</p>"), "did not answer on port")
	wantWithin(t, element(t, r, `class="problem"`, "</p>"), "did not answer on port")
}

func TestClosingTheLauncherStopsTheOwnersBuild(t *testing.T) {
	t.Parallel()
	s, ada := withManifest(t, slowManifest("30"))
	wantRedirect(t, postAtOnce(t, ada, "/apps/"+appID+"/cycle", 2*time.Second), "/apps/"+appID+"#candidate")
	waitLive(t, ada, "Running build stage slow.", 5*time.Second)

	closed := make(chan error, 1)
	go func() { closed <- s.launcher.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the owner's build instead of stopping it")
	}
	st, err := s.launcher.Candidates.State(appID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Build == nil || st.Build.OK {
		t.Fatalf("the stopped build is recorded as %+v", st.Build)
	}
	if got := st.Build.Problems[0].Message; got != "The build was stopped during stage slow." {
		t.Errorf("the stopped build's problem is %q", got)
	}
}

func TestARunAndTheOwnersBuildNeverGoTogether(t *testing.T) {
	t.Parallel()
	t.Run("a run is refused while the owner's build goes", func(t *testing.T) {
		t.Parallel()
		s, ada := withManifest(t, slowManifest("30"))
		withModel(t, s) // no script: a run that started would fail the test
		in, _ := s.submitted(t, "Change the page")
		wantRedirect(t, postAtOnce(t, ada, "/apps/"+appID+"/cycle", 2*time.Second), "/apps/"+appID+"#candidate")

		r := ada.post(intentPath(in.ID)+"/run", nil)
		wantStatus(t, r, fiber.StatusConflict)
		wantWithin(t, element(t, r, `data-testid="refusal-run"`, "</p>"), "A build or check of notes is already running; wait for it to end.")
		if got := intentStatus(t, r); got != "draft" {
			t.Errorf("the intent is %s", got)
		}
		if going := len(s.executor.Running()) > 0; going {
			t.Error("a run started beside the owner's build")
		}
	})
	t.Run("the owner's actions are refused while a run goes", func(t *testing.T) {
		t.Parallel()
		s, ada := withApp(t)
		in, g := running(t, s, ada)
		const busy = "Intent #1 is running on notes; stop it before changing the application by hand."
		for _, target := range []string{"/cycle", "/preview/start", "/preview/stop", "/activate"} {
			r := ada.post("/apps/"+appID+target, nil)
			wantStatus(t, r, fiber.StatusConflict)
			wantText(t, r, busy)
		}
		wantAppPolling(t, ada.get("/apps/"+appID), false)
		wantRedirect(t, ada.post(intentPath(in.ID)+"/stop", nil), intentPath(in.ID))
		g.Open()
	})
}
