package provider

import (
	"encoding/json"
	"fmt"
)

// WithoutKeys is the providers file raw with every provider's API key
// left out, and how many keys it held: what a backup carries when the
// owner did not ask for the keys. The providers, their base URLs and the
// Settings model stay; a restored launcher asks for each key again.
func WithoutKeys(raw []byte) ([]byte, int, error) {
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, 0, fmt.Errorf("provider: %s is not a providers file: %w", FileName, err)
	}
	keys := 0
	for i := range f.Providers {
		if f.Providers[i].APIKey != "" {
			keys++
		}
		f.Providers[i].APIKey = ""
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, 0, fmt.Errorf("provider: %w", err)
	}
	return append(b, '\n'), keys, nil
}

// Keys is how many API keys the providers file raw holds.
func Keys(raw []byte) (int, error) {
	var f file
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("provider: %s is not a providers file: %w", FileName, err)
	}
	keys := 0
	for _, p := range f.Providers {
		if p.APIKey != "" {
			keys++
		}
	}
	return keys, nil
}
