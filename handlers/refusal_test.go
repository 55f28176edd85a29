package handlers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gofiber/fiber/v2"

	"autoapp/executor/ai/provider"
	"autoapp/executor/preview"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/owner"
	"autoapp/intent/request"
	"autoapp/knowledge"
)

// Every domain package's refusal reaches the person as its sentence with
// the status of its code, however deeply it is wrapped; anything else is a
// failure of the server.
func TestEveryDomainRefusalIsToldAsItsSentence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
	}{
		{&intent.Error{Code: intent.EConflict, Message: "Intent #1 is running already."}, fiber.StatusConflict},
		{&app.Error{Code: app.EInvalid, Message: "The id is not a slug."}, fiber.StatusUnprocessableEntity},
		{&request.Error{Code: request.ENotFound, Message: "There is no request 9."}, fiber.StatusNotFound},
		{&delivery.Error{Code: delivery.EConflict, Message: "Delivered already."}, fiber.StatusConflict},
		{&provider.Error{Code: provider.EUnavailable, Message: "The provider did not answer."}, fiber.StatusBadGateway},
		{&preview.Error{Code: preview.ENotRunning, Message: "The preview is not running."}, fiber.StatusBadRequest},
		{&knowledge.Error{Code: knowledge.ENotFound, Message: "There is no lesson 3."}, fiber.StatusNotFound},
		{&owner.Error{Code: owner.EThrottled, Message: "Too many tries; wait a minute."}, fiber.StatusTooManyRequests},
		{&owner.Error{Code: owner.EDenied, Message: "The name or password is wrong."}, fiber.StatusUnauthorized},
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
