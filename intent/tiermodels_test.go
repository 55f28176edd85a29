package intent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"autoapp/intent/refusal"
)

// knownProviders plays the providers in Settings: only ollama is there.
type knownProviders struct{}

func (knownProviders) CheckModel(ref, what string) error {
	if strings.HasPrefix(ref, "ollama:") || !strings.Contains(ref, ":") {
		return nil
	}
	return &refusal.Error{Code: refusal.Invalid, Message: "There is no provider called \"" + strings.SplitN(ref, ":", 2)[0] + "\" for " + what + " " + ref + "."}
}

// TestTierModelsAreCheckedByTheWrite: the tier models' write checks each
// model against the providers it is given, in the operation itself; one
// that names no provider is refused with the tier's sentence and nothing
// is written. (Before, the handler checked the providers, then wrote.)
func TestTierModelsAreCheckedByTheWrite(t *testing.T) {
	e := mustOpen(t)
	ctx := context.Background()
	err := e.svc.SetTierModels(ctx, "op-1", map[string]string{"quick": "ollama:qwen3:4b", "deep": "vllm:big"}, knownProviders{})
	ie := wantRefusal(t, err, refusal.Invalid)
	if want := `The deep tier's model was not saved. There is no provider called "vllm" for the deep tier vllm:big.`; ie.Message != want {
		t.Fatalf("message %q, want %q", ie.Message, want)
	}
	if _, err := os.Stat(filepath.Join(e.root, "launcher", "intent-models.json")); !os.IsNotExist(err) {
		t.Fatalf("the refused models were written: %v", err)
	}
	if err := e.svc.SetTierModels(ctx, "op-2", map[string]string{"quick": "ollama:qwen3:4b", "deep": "gpt-5"}, knownProviders{}); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.svc.TierModels(); m["quick"] != "ollama:qwen3:4b" || m["deep"] != "gpt-5" {
		t.Fatalf("written: %v", m)
	}
}
