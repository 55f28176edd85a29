// Package knowledge will be the launcher's memory, kept in
// <root>/launcher/knowledge.sqlite: the event log, the turns and the
// documents each was given, build and check cases, lessons and their
// servings. The store itself is opened and migrated by `autoapp serve`
// (see migrations); the code that writes and reads it lands with the
// knowledge issue.
package knowledge
