package owner_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"autoapp/intent/owner"
	"autoapp/intent/refusal"
	"autoapp/intent/timetest"
	"autoapp/migrations"
	"autoapp/migrations/migrationstest"
)

const (
	name     = "Ada Lovelace"
	password = "correct horse battery"
)

// newService is a service over a fresh store whose clock the test holds.
func newService(t *testing.T) (*owner.Service, *timetest.Clock, *migrations.DB) {
	t.Helper()
	db := migrationstest.Intents(t)
	c := timetest.NewClock(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	return owner.NewService(db, c.Now, owner.HashParams{}), c, db
}

// withOwner is a service whose owner has been created.
func withOwner(t *testing.T) (*owner.Service, *timetest.Clock, *migrations.DB) {
	t.Helper()
	s, c, db := newService(t)
	if err := s.Create(context.Background(), name, password, password); err != nil {
		t.Fatalf("create the owner: %v", err)
	}
	return s, c, db
}

func signIn(t *testing.T, s *owner.Service) string {
	t.Helper()
	signed, err := s.SignIn(context.Background(), name, password, owner.Client{})
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	return signed.Session
}

// wantRefusal checks err is a *refusal.Error with the code and sentence.
func wantRefusal(t *testing.T, err error, code refusal.Code, sentence string) *refusal.Error {
	t.Helper()
	var oe *refusal.Error
	if !errors.As(err, &oe) {
		t.Fatalf("got %v, want the refusal %q", err, sentence)
	}
	if oe.Code != code || oe.Message != sentence {
		t.Fatalf("got %s %q, want %s %q", oe.Code, oe.Message, code, sentence)
	}
	return oe
}

func liveSession(t *testing.T, s *owner.Service, id string) {
	t.Helper()
	o, err := s.Session(context.Background(), id)
	if err != nil {
		t.Fatalf("the session ended: %v", err)
	}
	if o.Name != name {
		t.Fatalf("the session belongs to %q, want %q", o.Name, name)
	}
}

func endedSession(t *testing.T, s *owner.Service, id string) {
	t.Helper()
	if _, err := s.Session(context.Background(), id); !errors.Is(err, owner.ErrNoSession) {
		t.Fatalf("Session = %v, want ErrNoSession", err)
	}
}

func TestCreateRefusesASecondOwner(t *testing.T) {
	s, _, _ := withOwner(t)
	ctx := context.Background()

	err := s.Create(ctx, "Mallory", "another long password", "another long password")
	wantRefusal(t, err, refusal.Conflict, "The owner already exists. Sign in instead.")

	got, err := s.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != name {
		t.Fatalf("the owner is %q after a refused second create, want %q", got.Name, name)
	}
	if _, err := s.SignIn(ctx, "Mallory", "another long password", owner.Client{}); err == nil {
		t.Fatal("the refused second owner can sign in")
	}
}

func TestANewPasswordIsChecked(t *testing.T) {
	tests := []struct {
		name     string
		password string
		again    string
		want     string // empty when the password is accepted
	}{
		{"eleven characters", "abcdefghijk", "abcdefghijk", "The password must be at least 12 characters long."},
		{"empty", "", "", "The password must be at least 12 characters long."},
		{"eleven letters in four bytes each", "𝒶𝒷𝒸𝒹𝑒𝒻𝑔𝒽𝒾𝒿𝓀", "𝒶𝒷𝒸𝒹𝑒𝒻𝑔𝒽𝒾𝒿𝓀", "The password must be at least 12 characters long."},
		{"the two differ", "correct horse battery", "correct horse batterY", "The two passwords differ. Type the same password twice."},
		{"twelve characters", "abcdefghijkl", "abcdefghijkl", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newService(t)
			ctx := context.Background()
			err := s.Create(ctx, name, tt.password, tt.again)
			exists, xerr := s.Exists(ctx)
			if xerr != nil {
				t.Fatal(xerr)
			}
			if tt.want == "" {
				if err != nil || !exists {
					t.Fatalf("Create = %v, owner exists %v; want the owner created", err, exists)
				}
				return
			}
			wantRefusal(t, err, refusal.Invalid, tt.want)
			if exists {
				t.Fatal("a refused password created the owner")
			}
			_, err = s.Set(ctx, name, tt.password, tt.again)
			wantRefusal(t, err, refusal.Invalid, tt.want)
		})
	}
}

func TestSignInAnswersOneSentenceForAnyMismatch(t *testing.T) {
	tests := []struct {
		name, who, password string
		ok                  bool
	}{
		{"wrong password", name, "correct horse battery!", false},
		{"wrong name", "Charles Babbage", password, false},
		{"empty password", name, "", false},
		{"both right", name, password, true},
		{"name in another case with spaces around", "  ada LOVELACE ", password, true},
	}
	s, _, _ := withOwner(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signed, err := s.SignIn(context.Background(), tt.who, tt.password, owner.Client{})
			if tt.ok {
				if err != nil {
					t.Fatalf("sign in: %v", err)
				}
				liveSession(t, s, signed.Session)
				return
			}
			wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
			if signed != (owner.SignedIn{}) {
				t.Fatalf("a refused sign-in returned %+v", signed)
			}
		})
	}
}

func TestSignInWithoutAnOwnerIsAMismatch(t *testing.T) {
	s, _, _ := newService(t)
	_, err := s.SignIn(context.Background(), name, password, owner.Client{})
	wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
}

func TestFiveFailuresWithinAMinuteThrottleTheName(t *testing.T) {
	s, c, _ := withOwner(t)
	ctx := context.Background()
	for i := 0; i < owner.MaxFailures; i++ {
		// The same account whatever the case of the name.
		who := []string{name, "ada lovelace", "ADA LOVELACE "}[i%3]
		_, err := s.SignIn(ctx, who, "not the password", owner.Client{})
		wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
		c.Advance(time.Second)
	}
	// The first failure was 5s ago, so the name is free 55s from now.
	_, err := s.SignIn(ctx, name, password, owner.Client{})
	oe := wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 55 seconds.")
	if oe.RetryAfter != 55*time.Second {
		t.Fatalf("RetryAfter = %v, want 55s", oe.RetryAfter)
	}

	t.Run("another name from another client is not throttled", func(t *testing.T) {
		_, err := s.SignIn(ctx, "Charles Babbage", password, owner.Client{Address: "192.0.2.8"})
		wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
	})

	c.Advance(54 * time.Second)
	_, err = s.SignIn(ctx, name, password, owner.Client{})
	wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 1 second.")

	c.Advance(time.Second)
	liveSession(t, s, signIn(t, s))
}

// The throttle counts the account the name check signs in to: every spelling
// strings.EqualFold takes for the owner's name counts against one throttle.
func TestEverySpellingOfTheNameSharesOneThrottle(t *testing.T) {
	tests := []struct {
		name, owner, who string
	}{
		{"the same name", "Sam", "Sam"},
		{"in capitals", "Sam", "SAM"},
		{"with spaces around", "Sam", "  sam "},
		{"with a long s", "Sam", "\u017fam"},
		{"with a long s and capitals", "Sam", "\u017fAM"},
		{"with a Kelvin sign", "Niko", "Ni\u212ao"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := newService(t)
			ctx := context.Background()
			if err := s.Create(ctx, tt.owner, password, password); err != nil {
				t.Fatal(err)
			}
			// Unthrottled, the spelling signs in as the owner.
			signed, err := s.SignIn(ctx, tt.who, password, owner.Client{})
			if err != nil {
				t.Fatalf("sign in as %q: %v", tt.who, err)
			}
			if o, err := s.Session(ctx, signed.Session); err != nil || o.Name != tt.owner {
				t.Fatalf("Session = %+v, %v; want %s", o, err, tt.owner)
			}

			for i := 0; i < owner.MaxFailures; i++ {
				_, err := s.SignIn(ctx, tt.owner, "not the password", owner.Client{})
				wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
			}
			_, err = s.SignIn(ctx, tt.who, password, owner.Client{})
			wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 60 seconds.")
		})
	}
}

// Two names fold alike exactly when strings.EqualFold takes one for the
// other, so the throttle's account is the name check's.
func TestNamesFoldAlikeExactlyWhenEqualFoldSaysSo(t *testing.T) {
	tests := []struct{ name, a, b string }{
		{"ascii cases", "Sam", "sAM"},
		{"long s", "Sam", "\u017fam"},
		{"Kelvin sign", "Kilo", "\u212ailo"},
		{"Greek sigmas", "\u03a3\u03c3", "\u03c2\u03a3"},
		{"dotless i is not i", "Sim", "S\u0131m"},
		{"dotted capital I is not i", "Sim", "S\u0130m"},
		{"different names", "Sam", "Pam"},
		{"a longer name", "Sam", "Samuel"},
		{"spaces around", " Sam ", "sam"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := strings.EqualFold(strings.TrimSpace(tt.a), strings.TrimSpace(tt.b))
			if got := owner.FoldName(tt.a) == owner.FoldName(tt.b); got != want {
				t.Fatalf("%q and %q fold alike: %v, EqualFold: %v", tt.a, tt.b, got, want)
			}
		})
	}
}

// Guesses sent at once are counted as they arrive, not when their hash has
// been checked: at most MaxFailures reach the hash in a window.
func TestGuessesSentAtOnceAreThrottledToo(t *testing.T) {
	const guesses = 50
	s, _, _ := withOwner(t)
	checks := owner.CountPasswordChecks(s)
	ctx := context.Background()

	start := make(chan struct{})
	errs := make(chan error, guesses)
	var wg sync.WaitGroup
	for i := 0; i < guesses; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := s.SignIn(ctx, name, "not the password", owner.Client{})
			errs <- err
		}()
	}
	close(start)
	wg.Wait()
	close(errs)

	denied, throttled := 0, 0
	for err := range errs {
		var oe *refusal.Error
		switch {
		case errors.As(err, &oe) && oe.Code == refusal.Denied:
			denied++
		case errors.As(err, &oe) && oe.Code == refusal.Throttled:
			throttled++
		default:
			t.Errorf("a guess answered %v, want a mismatch or the throttle", err)
		}
	}
	if n := checks.Load(); n > owner.MaxFailures {
		t.Errorf("%d of %d guesses sent at once reached the password hash, want at most %d", n, guesses, owner.MaxFailures)
	}
	if denied > owner.MaxFailures || denied+throttled != guesses {
		t.Errorf("%d guesses were told a mismatch and %d throttled, want at most %d mismatches and the rest throttled",
			denied, throttled, owner.MaxFailures)
	}
}

// lockName makes MaxFailures wrong guesses for the owner's name from the
// client, and checks the next attempt, with the right password, is refused.
func lockName(t *testing.T, s *owner.Service, from owner.Client) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < owner.MaxFailures; i++ {
		_, err := s.SignIn(ctx, name, "not the password", from)
		wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
	}
	_, err := s.SignIn(ctx, name, password, from)
	wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 60 seconds.")
}

// The attack of issue #26: a preview on the owner's machine, at the owner's
// address, guessed the owner's name until the owner could not sign in. A
// browser that signed in before keeps an allowance of its own.
func TestOthersGuessesDoNotLockOutABrowserThatSignedInBefore(t *testing.T) {
	s, _, _ := withOwner(t)
	ctx := context.Background()
	const here = "127.0.0.1"
	first, err := s.SignIn(ctx, name, password, owner.Client{Address: here})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Browser) != 43 {
		t.Fatalf("the first sign-in gave the browser the token %q, want 256 random bits", first.Browser)
	}
	browser := owner.Client{Address: here, Browser: first.Browser}

	lockName(t, s, owner.Client{Address: here})

	again, err := s.SignIn(ctx, name, password, browser)
	if err != nil {
		t.Fatalf("the owner's browser could not sign in while another client was throttled: %v", err)
	}
	liveSession(t, s, again.Session)
	if again.Browser != first.Browser {
		t.Errorf("a known browser was given a new token %q, want it kept", again.Browser)
	}

	t.Run("the guessing client is still throttled", func(t *testing.T) {
		_, err := s.SignIn(ctx, name, password, owner.Client{Address: here})
		wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 60 seconds.")
	})
	t.Run("a token the server did not give is no browser", func(t *testing.T) {
		made, err := owner.RandomToken()
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.SignIn(ctx, name, password, owner.Client{Address: here, Browser: made})
		wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 60 seconds.")
	})
}

// A known browser's own failures count against it, and only it among the
// known browsers; they count against the name for everyone else.
func TestABrowsersOwnFailuresThrottleIt(t *testing.T) {
	s, _, _ := withOwner(t)
	ctx := context.Background()
	known := func() owner.Client {
		signed, err := s.SignIn(ctx, name, password, owner.Client{Address: "127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		return owner.Client{Address: "127.0.0.1", Browser: signed.Browser}
	}
	mine, other := known(), known()
	if mine.Browser == other.Browser {
		t.Fatal("two browsers were given one token")
	}
	for i := 0; i < owner.MaxFailures; i++ {
		_, err := s.SignIn(ctx, name, "not the password", mine)
		wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
	}
	_, err := s.SignIn(ctx, name, password, mine)
	wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins from this browser. Try again in 60 seconds.")

	if _, err := s.SignIn(ctx, name, password, other); err != nil {
		t.Fatalf("another known browser could not sign in: %v", err)
	}
	_, err = s.SignIn(ctx, name, password, owner.Client{Address: "192.0.2.7"})
	wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 60 seconds.")
}

// A client that is not a known browser is also held to its address's
// failures, whatever names it tries.
func TestAnAddressIsThrottledAcrossNames(t *testing.T) {
	s, _, _ := withOwner(t)
	ctx := context.Background()
	guesser := owner.Client{Address: "192.0.2.7"}
	for i := 0; i < owner.MaxFailures; i++ {
		_, err := s.SignIn(ctx, fmt.Sprintf("Guess %d", i), password, guesser)
		wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
	}
	_, err := s.SignIn(ctx, name, password, guesser)
	wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins from this network address. Try again in 60 seconds.")

	if _, err := s.SignIn(ctx, name, password, owner.Client{Address: "192.0.2.8"}); err != nil {
		t.Fatalf("a client at another address could not sign in: %v", err)
	}
}

// A browser is known for KnownBrowserLife after its last sign-in, and
// forgotten by Set, which is what the owner runs on new credentials.
func TestABrowserIsForgottenAfterItsLifeOrBySet(t *testing.T) {
	tests := []struct {
		name   string
		forget func(t *testing.T, s *owner.Service, c *timetest.Clock)
	}{
		{"after its life", func(t *testing.T, s *owner.Service, c *timetest.Clock) {
			c.Advance(owner.KnownBrowserLife)
		}},
		{"by set", func(t *testing.T, s *owner.Service, c *timetest.Clock) {
			if _, err := s.Set(context.Background(), name, password, password); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, _ := withOwner(t)
			ctx := context.Background()
			signed, err := s.SignIn(ctx, name, password, owner.Client{})
			if err != nil {
				t.Fatal(err)
			}
			c.Advance(owner.KnownBrowserLife - time.Minute)
			// Signing in again keeps it known from now on.
			if _, err := s.SignIn(ctx, name, password, owner.Client{Browser: signed.Browser}); err != nil {
				t.Fatal(err)
			}
			tt.forget(t, s, c)
			lockName(t, s, owner.Client{})
			_, err = s.SignIn(ctx, name, password, owner.Client{Browser: signed.Browser})
			wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 60 seconds.")

			c.Advance(owner.FailureWindow)
			again, err := s.SignIn(ctx, name, password, owner.Client{Browser: signed.Browser})
			if err != nil {
				t.Fatal(err)
			}
			if again.Browser == signed.Browser || len(again.Browser) != 43 {
				t.Fatalf("a forgotten browser got the token %q back, want a new one", again.Browser)
			}
		})
	}
}

func TestASessionEndsAfterADayUnused(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		live  bool
	}{
		{"used a minute later", time.Minute, true},
		{"used a minute short of a day later", owner.SessionIdle - time.Minute, true},
		{"used a day later", owner.SessionIdle, false},
		{"used two days later", 2 * owner.SessionIdle, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, _ := withOwner(t)
			id := signIn(t, s)
			c.Advance(tt.after)
			if tt.live {
				liveSession(t, s, id)
			} else {
				endedSession(t, s, id)
			}
		})
	}
}

func TestUsingASessionKeepsItAliveUpToSevenDays(t *testing.T) {
	s, c, _ := withOwner(t)
	start := c.Now()
	id := signIn(t, s)
	// Used every 20 hours: never idle for a day, so alive well past one.
	for c.Now().Sub(start)+20*time.Hour < owner.SessionAbsolute {
		c.Advance(20 * time.Hour)
		liveSession(t, s, id)
	}
	if used := c.Now().Sub(start); used <= owner.SessionIdle {
		t.Fatalf("the session was only used for %v", used)
	}
	c.Set(start.Add(owner.SessionAbsolute))
	endedSession(t, s, id)
}

func TestSignOutEndsTheSession(t *testing.T) {
	s, _, _ := withOwner(t)
	ctx := context.Background()
	kept := signIn(t, s)
	ended := signIn(t, s)

	if err := s.SignOut(ctx, ended); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	endedSession(t, s, ended)
	liveSession(t, s, kept)

	if err := s.SignOut(ctx, ended); err != nil {
		t.Fatalf("signing out of an ended session: %v", err)
	}
	endedSession(t, s, "")
}

func TestSetReplacesThePasswordAndEndsEverySession(t *testing.T) {
	s, _, _ := withOwner(t)
	ctx := context.Background()
	ids := []string{signIn(t, s), signIn(t, s)}

	const newPassword = "a brand new passphrase"
	created, err := s.Set(ctx, "Ada King", newPassword, newPassword)
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	if created {
		t.Fatal("Set over an existing owner says it created one")
	}
	for _, id := range ids {
		endedSession(t, s, id)
	}
	_, err = s.SignIn(ctx, "Ada King", password, owner.Client{})
	wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
	signed, err := s.SignIn(ctx, "Ada King", newPassword, owner.Client{})
	if err != nil {
		t.Fatalf("sign in with the new password: %v", err)
	}
	o, err := s.Session(ctx, signed.Session)
	if err != nil || o.Name != "Ada King" {
		t.Fatalf("Session = %+v, %v; want Ada King", o, err)
	}
}

func TestSetCreatesTheOwnerOnAFreshServer(t *testing.T) {
	s, _, _ := newService(t)
	created, err := s.Set(context.Background(), name, password, password)
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	if !created {
		t.Fatal("Set on a fresh server says the owner existed")
	}
	liveSession(t, s, signIn(t, s))
}

func TestSetLiftsTheThrottle(t *testing.T) {
	s, _, _ := withOwner(t)
	ctx := context.Background()
	for i := 0; i < owner.MaxFailures; i++ {
		_, err := s.SignIn(ctx, name, "not the password", owner.Client{})
		wantRefusal(t, err, refusal.Denied, "That name and password do not match.")
	}
	_, err := s.SignIn(ctx, name, password, owner.Client{})
	wantRefusal(t, err, refusal.Throttled, "Too many failed sign-ins for this name. Try again in 60 seconds.")

	if _, err := s.Set(ctx, name, password, password); err != nil {
		t.Fatalf("set: %v", err)
	}
	liveSession(t, s, signIn(t, s))
}

func TestSessionIDsAreLongAndDistinct(t *testing.T) {
	s, _, _ := withOwner(t)
	seen := map[string]bool{}
	for i := 0; i < 8; i++ {
		id := signIn(t, s)
		if len(id) != 43 {
			t.Fatalf("session id %q is %d characters, want 43", id, len(id))
		}
		raw, err := base64.RawURLEncoding.DecodeString(id)
		if err != nil || len(raw) != 32 {
			t.Fatalf("session id %q is not 256 bits in unpadded base64url: %d bytes, %v", id, len(raw), err)
		}
		if seen[id] {
			t.Fatalf("session id %q was handed out twice", id)
		}
		seen[id] = true
	}
}

func TestTheStoreNeverHoldsTheSessionID(t *testing.T) {
	s, _, db := withOwner(t)
	id := signIn(t, s)

	var rows []struct {
		IDHash    string `db:"id_hash"`
		CreatedAt int64  `db:"created_at"`
		LastSeen  int64  `db:"last_seen_at"`
	}
	if err := db.Read.Select(&rows, `SELECT id_hash, created_at, last_seen_at FROM sessions`); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d session rows after one sign-in, want 1", len(rows))
	}
	if rows[0].IDHash == id || bytes.Contains([]byte(rows[0].IDHash), []byte(id)) {
		t.Fatalf("the sessions table holds the session id itself: %q", rows[0].IDHash)
	}
	// Nor anywhere else in the files a backup would copy.
	for _, path := range []string{db.Path, db.Path + "-wal"} {
		b, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(id)) {
			t.Fatalf("%s holds the session id", filepath.Base(path))
		}
	}
}

// A session is the owner's: with the owner's row gone (removed by hand),
// no session is anyone's.
func TestASessionWithoutTheOwnerIsNoSession(t *testing.T) {
	s, _, db := withOwner(t)
	id := signIn(t, s)
	liveSession(t, s, id)
	if _, err := db.Write.Exec(`DELETE FROM owner`); err != nil {
		t.Fatal(err)
	}
	endedSession(t, s, id)
}
