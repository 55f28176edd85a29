package handlers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent/refusal"
)

// Every domain package's refusal reaches the person as its sentence with
// the status of its code, however deeply it is wrapped; anything else is a
func TestEveryDomainRefusalIsToldAsItsSentence(t *testing.T) {
	cases := []struct {
		err    error
		status int
	}{
		{&refusal.Error{Code: refusal.Conflict, Message: "Intent #1 is running already."}, fiber.StatusConflict},
		{&refusal.Error{Code: refusal.Invalid, Message: "The id is not a slug."}, fiber.StatusUnprocessableEntity},
		{&refusal.Error{Code: refusal.NotFound, Message: "There is no request 9."}, fiber.StatusNotFound},
		{&refusal.Error{Code: refusal.Conflict, Message: "Delivered already."}, fiber.StatusConflict},
		{&refusal.Error{Code: refusal.Unavailable, Message: "The provider did not answer."}, fiber.StatusBadGateway},
		{&refusal.Error{Code: refusal.NotRunning, Message: "The preview is not running."}, fiber.StatusBadRequest},
		{&refusal.Error{Code: refusal.NotFound, Message: "There is no lesson 3."}, fiber.StatusNotFound},
		{&refusal.Error{Code: refusal.Throttled, Message: "Too many tries; wait a minute."}, fiber.StatusTooManyRequests},
		{&refusal.Error{Code: refusal.Denied, Message: "The name or password is wrong."}, fiber.StatusUnauthorized},
	}
	for _, c := range cases {
		wrapped := fmt.Errorf("deep inside: %w", c.err)
		status, sentence, ok := refused(wrapped)
		if !ok || status != c.status || sentence != c.err.Error() {
			t.Errorf("%T: got %d %q (%v), want %d %q", c.err, status, sentence, ok, c.status, c.err.Error())
		}
	}
	if _, _, ok := refused(errors.New("disk I/O error")); ok {
		t.Error("a failure of the server was told as a refusal")
	}
}
