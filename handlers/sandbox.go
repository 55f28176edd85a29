package handlers

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"autoapp/intent/workspace/sandbox"
	"autoapp/views"
)

// Sandbox is what the handlers need of the sandbox guard.
type Sandbox interface {
	State() sandbox.State
	SetUnconfined(on bool) error
}

// sandboxView says how the engineer's code runs, for Settings and the
// Applications pages.
func sandboxView(sb Sandbox) views.SandboxView {
	st := sb.State()
	v := views.SandboxView{Sentence: st.Sentence(), Confined: st.Confined(), Refused: st.Refused(),
		Unconfined: st.Unconfined, Problem: st.Problem,
		BuildLimits: sandbox.BuildLimits.Lines(), PreviewLimits: sandbox.PreviewLimits.Lines()}
	found := map[string]bool{}
	for _, tc := range sandbox.Toolchains() {
		found[tc.Program] = true
		version := tc.Version
		if version == "" {
			version = "version not known"
		}
		v.Toolchains = append(v.Toolchains, views.ToolchainView{Program: tc.Program, Version: version, Found: tc.Found,
			Roots: strings.Join(tc.Roots, ", ")})
	}
	for _, p := range sandbox.ToolchainPrograms {
		if !found[p] {
			v.Missing = append(v.Missing, p)
		}
	}
	return v
}

// sandboxSave keeps the owner's choice to run the engineer's code
// unconfined, or in the sandbox again.
func (h *settingsPages) sandboxSave(c *fiber.Ctx) error {
	on := c.FormValue("unconfined") == "1"
	if err := h.Sandbox.SetUnconfined(on); err != nil {
		return err
	}
	if on {
		h.Log.Warn("the owner turned the sandbox off: builds and previews run unconfined")
	} else {
		h.Log.Info("the owner turned the sandbox on")
	}
	return c.Redirect("/settings#sandbox", fiber.StatusSeeOther)
}
