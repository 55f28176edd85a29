package intent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"autoapp/intent/atomicfile"
	"autoapp/intent/plan"
	"autoapp/intent/refusal"
)

// TierModels returns the model of each tier from intent-models.json, keyed
// quick, standard and deep; "" (null in the file) leaves a tier to the
// model chosen in Settings. A missing file sets no tier.
func (s *Service) TierModels() (map[string]string, error) { return s.tiers() }

// tiers is TierModels, for each of the services.
func (s *store) tiers() (map[string]string, error) {
	r := s.tierModels.Get()
	return maps.Clone(r.m), r.err
}

// tierModels is what a read of intent-models.json found.
type tierModels struct {
	m   map[string]string
	err error
}

// readTierModels is TierModels of the file at path's bytes, or of the
// error reading them.
func readTierModels(path string, b []byte, err error) tierModels {
	m := map[string]string{}
	for _, t := range plan.Tiers {
		m[t] = ""
	}
	if errors.Is(err, fs.ErrNotExist) {
		return tierModels{m: m}
	}
	if err != nil {
		return tierModels{err: fmt.Errorf("intent: tier models: %w", err)}
	}
	var file map[string]*string
	if err := json.Unmarshal(b, &file); err != nil {
		return tierModels{err: fmt.Errorf("intent: %s is not a JSON object of tier → model: %w", path, err)}
	}
	for tier, model := range file {
		if _, ok := m[tier]; ok && model != nil {
			m[tier] = *model
		}
	}
	return tierModels{m: m}
}

// ModelChecker says whether a model reference names a provider the owner
// has (the providers in Settings); a refusal is the sentence to show.
type ModelChecker interface {
	CheckModel(ref, what string) error
}

// SetTierModels writes the model of each tier to intent-models.json,
// replacing the file at once. A tier left out or given "" has no model of
// its own. Each model must be well formed and, when known is not nil,
// name a provider known has, checked in the operation's transaction.
func (s *Service) SetTierModels(ctx context.Context, opID string, m map[string]string, known ModelChecker) error {
	file := map[string]*string{}
	for _, t := range plan.Tiers {
		file[t] = nil
	}
	for tier, model := range m {
		if !slices.Contains(plan.Tiers, tier) {
			return refuse(refusal.Invalid, "There is no tier %q; the tiers are %s.", tier, strings.Join(plan.Tiers, ", "))
		}
		model = strings.TrimSpace(model)
		if err := checkModel(model); err != nil {
			return refuse(refusal.Invalid, "The %s tier's model was not saved. %s", tier, err.Error())
		}
		if model != "" {
			file[tier] = &model
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(file); err != nil {
		return fmt.Errorf("intent: tier models: %w", err)
	}
	// The file is written inside the operation's transaction, so two
	// settings never interleave and a repeated operation writes nothing.
	return s.once(ctx, opID, "set-tier-models", "", b.String(), func(tx *sqlx.Tx, now time.Time) error {
		for _, tier := range plan.Tiers {
			if known == nil || file[tier] == nil {
				continue
			}
			if err := known.CheckModel(*file[tier], "the "+tier+" tier"); err != nil {
				var r *refusal.Error
				if errors.As(err, &r) {
					return refuse(r.Code, "The %s tier's model was not saved. %s", tier, r.Message)
				}
				return err
			}
		}
		if err := atomicfile.Write(s.tierModelsPath(), b.Bytes()); err != nil {
			return fmt.Errorf("intent: tier models: %w", err)
		}
		return nil
	})
}
