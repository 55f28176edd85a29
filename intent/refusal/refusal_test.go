package refusal_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"autoapp/intent/refusal"
)

func TestEachCodeHasItsStatus(t *testing.T) {
	cases := []struct {
		code refusal.Code
		want int
	}{
		{refusal.Invalid, http.StatusUnprocessableEntity},
		{refusal.Conflict, http.StatusConflict},
		{refusal.NotFound, http.StatusNotFound},
		{refusal.Denied, http.StatusUnauthorized},
		{refusal.Throttled, http.StatusTooManyRequests},
		{refusal.Unavailable, http.StatusBadGateway},
		{refusal.Failed, http.StatusBadRequest},
		{refusal.NotRunning, http.StatusBadRequest},
		{"", http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(string(c.code), func(t *testing.T) {
			if got := refusal.Status(c.code); got != c.want {
				t.Errorf("Status(%q) = %d, want %d", c.code, got, c.want)
			}
		})
	}
}

func TestARefusalReadsAsItsSentenceThroughAWrap(t *testing.T) {
	err := fmt.Errorf("intent: run: %w", refusal.Errorf(refusal.Conflict, "Intent %d is running already.", 7))
	e, ok := refusal.As(err)
	if !ok || e.Code != refusal.Conflict || e.Error() != "Intent 7 is running already." {
		t.Fatalf("As(%v) = %+v, %v", err, e, ok)
	}
	if _, ok := refusal.As(errors.New("disk full")); ok {
		t.Error("a plain error reads as a refusal")
	}
	if _, ok := refusal.As(nil); ok {
		t.Error("nil reads as a refusal")
	}
}

func TestAStoppedRefusalIsTheContextsCancellation(t *testing.T) {
	err := &refusal.Error{Code: refusal.Unavailable, Message: "It was stopped.", Cause: context.Canceled}
	if !errors.Is(err, context.Canceled) || err.Error() != "It was stopped." {
		t.Fatalf("errors.Is = %v, Error() = %q", errors.Is(err, context.Canceled), err.Error())
	}
}

func TestProblemsReadAsOneLine(t *testing.T) {
	cases := []struct {
		name string
		ps   refusal.Problems
		want string
	}{
		{"none", nil, ""},
		{"one without a field", refusal.Problems{{Message: "the input is empty"}}, "the input is empty"},
		{"several", refusal.Problems{{Field: "criteria[0].text", Message: "is empty"}, {Message: "no task"}, {Field: "slug", Message: "is taken"}},
			"criteria[0].text: is empty; no task; slug: is taken"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.ps.Error(); got != c.want {
				t.Errorf("Error() = %q, want %q", got, c.want)
			}
		})
	}
}
