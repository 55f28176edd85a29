// Package knowledge is the launcher's memory, kept in
// <root>/launcher/knowledge.sqlite.
//
// It holds the event log — every line the server and its turns logged, each
// with the identity (run, call, application, release, revision) it had when
// it was written, NULL when it had none — and the turns: one contexts row per
// turn with the hash of its instructions, the words it was about, and each
// document exactly as it was delivered, the texts kept once each as blobs by
// their SHA-256. Beside each turn, what its run did to the application —
// the edits that landed, the builds, the runs of the checks — is kept as
// the run's work (Cases writes it as it hears of each), and Work reads a
// page of runs' work, cases and servings at once. Replays keeps what a
// replay held still (its manifest, a blob) and one row per run of it that
// finished; a replay writes no serving, case or context here.
//
// Open migrates the store; retention runs in the background once the
// server starts it (StartRetention), at start and then hourly, in small
// batches: events older than thirty days, then the oldest beyond MaxEvents,
// and blobs older than thirty days that nothing refers to. Contexts are
// append-only and never deleted.
//
// Identity travels in a context.Context (WithIdentity; WithCall names the
// call of the run loop's envelope; WithPosition the release and revision a
// turn moves as it edits and builds): a row takes the identity of the
// context it is written under, as it is at that moment, never anything a
// model said.
// Store.Handler makes the server's slog logging write here too, without
// making the caller wait on the database.
package knowledge
