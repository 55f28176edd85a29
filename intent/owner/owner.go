// Package owner keeps the one person who may use this server: their name and
// password hash, their signed-in sessions, the browsers that signed in
// before and the throttle on failed sign-ins. It knows nothing of HTTP.
package owner

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"autoapp/intent/refusal"
	"autoapp/migrations"
)

// Limits a person meets, kept together so the README can quote them.
const (
	MinPasswordLength = 12
	MaxPasswordLength = 1024
	MaxNameLength     = 100

	// SessionIdle ends a session nobody used for this long.
	SessionIdle = 24 * time.Hour
	// SessionAbsolute ends a session this long after sign-in, used or not.
	SessionAbsolute = 7 * 24 * time.Hour
	// touchEvery bounds how often a busy session's last_seen_at is written.
	touchEvery = time.Minute

	// MaxFailures failed sign-ins within FailureWindow throttle a name, and
	// a client, each on its own (see reserveAttempt).
	MaxFailures   = 5
	FailureWindow = time.Minute
	// KnownBrowserLife is how long a browser that signed in stays known
	// without signing in again: as long as its cookie lasts, which is
	// the longest a browser keeps one (400 days).
	KnownBrowserLife = 400 * 24 * time.Hour
)

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// ErrNoSession is returned for a cookie that names no live session.
var ErrNoSession = refuse(refusal.NotFound, "Your session has ended. Sign in again.")

// Owner is the signed-in person as pages show them.
type Owner struct {
	Name string
}

// Service keeps the owner and their sessions in the intents store.
type Service struct {
	db  *migrations.DB
	now func() time.Time
	// hash holds argon2id's costs.
	hash HashParams
	// verify checks a password against its stored hash; a test swaps it
	// to count the checks.
	verify func(stored, password string) bool
}

// HashParams are argon2id's costs.
type HashParams struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// OWASP's first recommended argon2id configuration: 19 MiB, 2 passes, 1 lane.
var OWASP = HashParams{Memory: 19 * 1024, Time: 2, Threads: 1}

// NewService builds the service over the intents store with a clock;
// passwords are hashed at cost (the zero HashParams is OWASP). A stored
// hash names its own costs, so one made at another cost still verifies.
func NewService(db *migrations.DB, now func() time.Time, cost HashParams) *Service {
	if cost == (HashParams{}) {
		cost = OWASP
	}
	return &Service{db: db, now: now, hash: cost, verify: verifyPassword}
}

// Exists reports whether the owner has been created.
func (s *Service) Exists(ctx context.Context) (bool, error) {
	var n int
	if err := s.db.Read.GetContext(ctx, &n, `SELECT count(*) FROM owner`); err != nil {
		return false, fmt.Errorf("owner: exists: %w", err)
	}
	return n > 0, nil
}

// Get returns the owner.
func (s *Service) Get(ctx context.Context) (Owner, error) {
	var o Owner
	err := s.db.Read.GetContext(ctx, &o.Name, `SELECT name FROM owner WHERE id = 1`)
	if errors.Is(err, sql.ErrNoRows) {
		return o, refuse(refusal.NotFound, "No owner has been created yet.")
	}
	if err != nil {
		return o, fmt.Errorf("owner: get: %w", err)
	}
	return o, nil
}

// CheckName validates an owner name and returns it trimmed.
func CheckName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", refuse(refusal.Invalid, "Give the owner a name.")
	case utf8.RuneCountInString(name) > MaxNameLength:
		return "", refuse(refusal.Invalid, "The name is longer than %d characters.", MaxNameLength)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", refuse(refusal.Invalid, "The name cannot hold control characters.")
	}
	return name, nil
}

// CheckPassword validates a new password and its repetition.
func CheckPassword(password, again string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case n < MinPasswordLength:
		return refuse(refusal.Invalid, "The password must be at least %d characters long.", MinPasswordLength)
	case len(password) > MaxPasswordLength:
		return refuse(refusal.Invalid, "The password is longer than %d bytes.", MaxPasswordLength)
	case password != again:
		return refuse(refusal.Invalid, "The two passwords differ. Type the same password twice.")
	}
	return nil
}

// Create makes the owner on a fresh server. It refuses when one exists: the
// web page that calls it is only for a fresh root.
func (s *Service) Create(ctx context.Context, name, password, again string) error {
	name, err := CheckName(name)
	if err != nil {
		return err
	}
	if err := CheckPassword(password, again); err != nil {
		return err
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return err
	}
	now := s.now().UnixMilli()
	res, err := s.db.Write.ExecContext(ctx,
		`INSERT INTO owner (id, name, password_hash, created_at, updated_at) VALUES (1, ?, ?, ?, ?)
		 ON CONFLICT (id) DO NOTHING`, name, hash, now, now)
	if err != nil {
		return fmt.Errorf("owner: create: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return refuse(refusal.Conflict, "The owner already exists. Sign in instead.")
	}
	return nil
}

// Set creates the owner or replaces their name and password, ends every
// session and forgets every browser that signed in. It is what `autoapp owner set` calls from the terminal.
func (s *Service) Set(ctx context.Context, name, password, again string) (created bool, err error) {
	name, err = CheckName(name)
	if err != nil {
		return false, err
	}
	if err := CheckPassword(password, again); err != nil {
		return false, err
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return false, err
	}
	now := s.now().UnixMilli()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("owner: set: %w", err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM owner`); err != nil {
		return false, fmt.Errorf("owner: set: %w", err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO owner (id, name, password_hash, created_at, updated_at) VALUES (1, ?, ?, ?, ?)
		 ON CONFLICT (id) DO UPDATE SET name = excluded.name, password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
		name, hash, now, now); err != nil {
		return false, fmt.Errorf("owner: set: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions`); err != nil {
		return false, fmt.Errorf("owner: set: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures`); err != nil {
		return false, fmt.Errorf("owner: set: %w", err)
	}
	// New credentials: no browser is vouched for by a sign-in with the old.
	if _, err := tx.ExecContext(ctx, `DELETE FROM known_browsers`); err != nil {
		return false, fmt.Errorf("owner: set: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("owner: set: %w", err)
	}
	return n == 0, nil
}

// Client is where a sign-in comes from, as far as the server can tell: the
// network address of the browser (the connection's, or the one a trusted
// proxy names), and the token of the cookie a browser is given when it
// signs in, if it sent one back.
type Client struct {
	Address string
	Browser string
}

// SignedIn is what a sign-in hands the browser: the session's id, and the
// token that tells later sign-ins this browser signed in before.
type SignedIn struct {
	Session string
	Browser string
}

// SignIn checks the name and password and opens a new session. Failed
// attempts are counted for the name and for the client, and throttled (see
// reserveAttempt).
func (s *Service) SignIn(ctx context.Context, name, password string, from Client) (SignedIn, error) {
	account := foldName(name)
	now := s.now()
	since := now.Add(-FailureWindow).UnixMilli()
	// The attempt counts as a failure before its hash is checked, so guesses
	// sent at once cannot all pass the throttle while the first are hashing.
	client, err := s.reserveAttempt(ctx, account, from, now)
	if err != nil {
		return SignedIn{}, err
	}

	var row struct {
		Name string `db:"name"`
		Hash string `db:"password_hash"`
	}
	err = s.db.Read.GetContext(ctx, &row, `SELECT name, password_hash FROM owner WHERE id = 1`)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
	}
	nameOK := err == nil && foldName(row.Name) == account
	// The hash is checked even for a wrong name so both take the same time.
	passOK := s.verify(row.Hash, password)
	if !nameOK || !passOK {
		// The reserved row stays: it is this failure.
		return SignedIn{}, refuse(refusal.Denied, "That name and password do not match.")
	}
	signed := SignedIn{Browser: from.Browser}
	if signed.Session, err = newSessionID(); err != nil {
		return SignedIn{}, err
	}
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
	}
	defer tx.Rollback()
	ms := now.UnixMilli()
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO sessions (id_hash, created_at, last_seen_at) VALUES (?, ?, ?)`, hashID(signed.Session), ms, ms); err != nil {
		return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
	}
	// Forget this client's failures, the row reserved for this attempt
	// among them, and whatever is older than the window. Other clients'
	// failures for the name stay: whoever made them is still throttled.
	if _, err := tx.ExecContext(ctx,
		`DELETE FROM sign_in_failures WHERE client = ? OR at <= ?`, client, since); err != nil {
		return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
	}
	// This browser is known from now on: a known one is known for longer,
	// any other (or one forgotten since, by Set) gets a new token.
	res, err := tx.ExecContext(ctx,
		`UPDATE known_browsers SET signed_in_at = ? WHERE id_hash = ? AND signed_in_at > ?`,
		ms, hashID(from.Browser), now.Add(-KnownBrowserLife).UnixMilli())
	if err != nil {
		return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
	}
	if n, _ := res.RowsAffected(); from.Browser == "" || n == 0 {
		if signed.Browser, err = RandomToken(); err != nil {
			return SignedIn{}, err
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO known_browsers (id_hash, created_at, signed_in_at) VALUES (?, ?, ?)`, hashID(signed.Browser), ms, ms); err != nil {
			return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
		}
	}
	// Browsers and sessions past their limits are of no use to anyone.
	if _, err := tx.ExecContext(ctx,
		`DELETE FROM known_browsers WHERE signed_in_at <= ?`, now.Add(-KnownBrowserLife).UnixMilli()); err != nil {
		return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
	}
	if err := s.deleteExpired(ctx, tx); err != nil {
		return SignedIn{}, err
	}
	if err := tx.Commit(); err != nil {
		return SignedIn{}, fmt.Errorf("owner: sign in: %w", err)
	}
	return signed, nil
}

// The failures an allowance counts, oldest first.
const (
	failuresForName    = `SELECT at FROM sign_in_failures WHERE account = ? AND at > ? ORDER BY at`
	failuresFromClient = `SELECT at FROM sign_in_failures WHERE client = ? AND at > ? ORDER BY at`
)

// allowance is one count of recent failures an attempt is held to.
type allowance struct {
	query, arg string
	// whose ends the refusal's first sentence.
	whose string
}

// reserveAttempt holds the attempt to its allowances, each MaxFailures
// failures within FailureWindow, and otherwise records it as a failure of
// the name from the client, returning the client's key. A browser that
// signed in before (its token is known) is held to its own failures only,
// so nobody else's guesses for the name lock it out. Any other client is
// held to the name's failures, from every client, and to its address's.
//
// Count and record share one writer transaction, which takes the write lock
// at BEGIN, so parallel attempts are counted one after another. The
// password is checked after the commit: argon2id is too slow to hold the
// writer for.
func (s *Service) reserveAttempt(ctx context.Context, account string, from Client, now time.Time) (string, error) {
	since := now.Add(-FailureWindow).UnixMilli()
	tx, err := s.db.Write.BeginTxx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("owner: sign in: %w", err)
	}
	defer tx.Rollback()
	known := 0
	if from.Browser != "" {
		if err := tx.GetContext(ctx, &known,
			`SELECT count(*) FROM known_browsers WHERE id_hash = ? AND signed_in_at > ?`,
			hashID(from.Browser), now.Add(-KnownBrowserLife).UnixMilli()); err != nil {
			return "", fmt.Errorf("owner: sign in: %w", err)
		}
	}
	var client string
	var allowances []allowance
	if known > 0 {
		client = "browser:" + hashID(from.Browser)
		allowances = []allowance{{failuresFromClient, client, "from this browser"}}
	} else {
		client = "address:" + from.Address
		allowances = []allowance{{failuresForName, account, "for this name"},
			{failuresFromClient, client, "from this network address"}}
	}
	var refused *refusal.Error
	var longest time.Duration
	for _, a := range allowances {
		var recent []int64
		if err := tx.SelectContext(ctx, &recent, a.query, a.arg, since); err != nil {
			return "", fmt.Errorf("owner: sign in: %w", err)
		}
		if len(recent) < MaxFailures {
			continue
		}
		// The longest wait is the one to tell.
		wait := time.UnixMilli(recent[len(recent)-MaxFailures]).Add(FailureWindow).Sub(now)
		if refused == nil || wait > longest {
			refused, longest = throttled(wait, a.whose), wait
		}
	}
	if refused != nil {
		return "", refused
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO sign_in_failures (account, client, at) VALUES (?, ?, ?)`, account, client, now.UnixMilli()); err != nil {
		return "", fmt.Errorf("owner: sign in: %w", err)
	}
	// Rows older than the window throttle nothing.
	if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_failures WHERE at <= ?`, since); err != nil {
		return "", fmt.Errorf("owner: sign in: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("owner: sign in: %w", err)
	}
	return client, nil
}

// throttled is the refusal of an attempt that may be made again after wait,
// told in whole seconds; whose says which allowance is used up.
func throttled(wait time.Duration, whose string) *refusal.Error {
	secs := int(wait.Seconds() + 0.999)
	if secs < 1 {
		secs = 1
	}
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return &refusal.Error{Code: refusal.Throttled, RetryAfter: time.Duration(secs) * time.Second,
		Message: fmt.Sprintf("Too many failed sign-ins %s. Try again in %d %s.", whose, secs, unit)}
}

// foldName is the trimmed name as strings.EqualFold compares it: each rune
// becomes the smallest rune of its unicode.SimpleFold orbit, the classes
// EqualFold treats as one. The name check and the throttle's account both
// use it, so no spelling that signs in escapes the throttle: ToLower keeps
// "ſam" (U+017F) apart from "sam", EqualFold does not.
func foldName(name string) string {
	name = strings.TrimSpace(name)
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *Service) deleteExpired(ctx context.Context, tx execer) error {
	now := s.now()
	if _, err := tx.ExecContext(ctx,
		`DELETE FROM sessions WHERE last_seen_at <= ? OR created_at <= ?`,
		now.Add(-SessionIdle).UnixMilli(), now.Add(-SessionAbsolute).UnixMilli()); err != nil {
		return fmt.Errorf("owner: expire sessions: %w", err)
	}
	return nil
}

// Session answers who holds the session id, and keeps it alive. An unknown
// or expired id is ErrNoSession.
func (s *Service) Session(ctx context.Context, id string) (Owner, error) {
	if id == "" {
		return Owner{}, ErrNoSession
	}
	var row struct {
		Name     sql.NullString `db:"name"`
		Created  int64          `db:"created_at"`
		LastSeen int64          `db:"last_seen_at"`
	}
	// Every request asks, so the owner's name is a subquery rather than a
	// join: SQLite plans a join again on each call here, as the driver's
	// statement cache clears the bindings its estimate depends on.
	err := s.db.Read.GetContext(ctx, &row,
		`SELECT (SELECT name FROM owner WHERE id = 1) AS name, created_at, last_seen_at FROM sessions WHERE id_hash = ?`, hashID(id))
	if errors.Is(err, sql.ErrNoRows) || err == nil && !row.Name.Valid {
		return Owner{}, ErrNoSession // no such session, or no owner
	}
	if err != nil {
		return Owner{}, fmt.Errorf("owner: session: %w", err)
	}
	now := s.now()
	created, last := time.UnixMilli(row.Created), time.UnixMilli(row.LastSeen)
	if !now.Before(last.Add(SessionIdle)) || !now.Before(created.Add(SessionAbsolute)) {
		if _, err := s.db.Write.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, hashID(id)); err != nil {
			return Owner{}, fmt.Errorf("owner: session: %w", err)
		}
		return Owner{}, ErrNoSession
	}
	if now.Sub(last) >= touchEvery {
		if _, err := s.db.Write.ExecContext(ctx,
			`UPDATE sessions SET last_seen_at = ? WHERE id_hash = ?`, now.UnixMilli(), hashID(id)); err != nil {
			return Owner{}, fmt.Errorf("owner: session: %w", err)
		}
	}
	return Owner{Name: row.Name.String}, nil
}

// SignOut deletes the session. Signing out of an ended session is not an error.
func (s *Service) SignOut(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	if _, err := s.db.Write.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, hashID(id)); err != nil {
		return fmt.Errorf("owner: sign out: %w", err)
	}
	return nil
}

// newSessionID is 256 random bits, URL-safe.
func newSessionID() (string, error) {
	return RandomToken()
}

// RandomToken returns 256 random bits encoded for a cookie or a form.
func RandomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("owner: no randomness: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// idKey is argon2id's key of password. The hash takes p.Memory KiB (19 MiB
// at OWASP), garbage once it returns; left to the runtime, the heap would
// keep those pages and grow its next goal by as much, so a server that
// signed someone in stays 20-30 MiB bigger. They are handed back to the
// system at once: a collection of a small heap, on a path that has just
// spent far longer hashing.
func idKey(password, salt []byte, p HashParams, n uint32) []byte {
	key := argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, n)
	debug.FreeOSMemory()
	return key
}

// The stored form is the PHC string: $argon2id$v=19$m=…,t=…,p=…$salt$hash.
func (s *Service) hashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("owner: no randomness: %w", err)
	}
	p := s.hash
	key := idKey([]byte(password), salt, p, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// dummyHash is verified against when there is no owner, so a wrong name costs
// the same time as a wrong password.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

func verifyPassword(stored, password string) bool {
	if stored == "" {
		stored = dummyHash
	}
	parts := strings.Split(stored, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	var p HashParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false
	}
	got := idKey([]byte(password), salt, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1 && stored != dummyHash
}
