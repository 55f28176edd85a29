// Package refusal is the one vocabulary every domain package refuses in: a
// code that says what kind of refusal it is, a sentence for the person, and
// the named problems behind it. The HTTP layer turns a code into a status
// here, in one place. It imports nothing of autoapp, so any package may use
// it.
package refusal

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Code classifies a refusal for the person and for the HTTP layer. Its
// words are part of what the pages and the command line answer: never
// change one.
type Code string

// The codes.
const (
	// Invalid: the input is wrong; the sentence says how.
	Invalid Code = "invalid"
	// Conflict: the state of something forbids it now.
	Conflict Code = "conflict"
	// NotFound: the thing it names does not exist.
	NotFound Code = "not_found"
	// Denied: the person could not be signed in.
	Denied Code = "denied"
	// Throttled: too many tries; Error.RetryAfter says when to try again.
	Throttled Code = "throttled"
	// Unavailable: a provider could not be asked (for its models).
	Unavailable Code = "unavailable"
	// Failed: it started but did not keep going (a preview that stopped).
	Failed Code = "failed"
	// NotRunning: there is nothing running to stop.
	NotRunning Code = "not_running"
)

// Status is the HTTP status the pages answer a refusal with.
func Status(code Code) int {
	switch code {
	case Invalid:
		return http.StatusUnprocessableEntity
	case Conflict:
		return http.StatusConflict
	case NotFound:
		return http.StatusNotFound
	case Denied:
		return http.StatusUnauthorized
	case Throttled:
		return http.StatusTooManyRequests
	case Unavailable:
		return http.StatusBadGateway
	}
	return http.StatusBadRequest
}

// Error is a refusal: its sentence is what the person reads, and the named
// problems behind it when there are several.
type Error struct {
	Code     Code
	Message  string
	Problems Problems
	// RetryAfter is set on Throttled.
	RetryAfter time.Duration
	// Cause is kept only for a context's own error, so that
	// errors.Is(err, context.Canceled) answers; its text is never shown.
	Cause error
}

func (e *Error) Error() string { return e.Message }

// Unwrap is the cancellation behind a stopped request, if any.
func (e *Error) Unwrap() error { return e.Cause }

// Errorf is a refusal with the sentence format makes of args.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// As is the refusal inside err, if it carries one.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Problem is one thing wrong with an input, named by its field
// (criteria[2].text, hunks[0].find); an empty field is the input as a whole.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// Problems is a list of named problems; as an error it reads as one line.
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}
