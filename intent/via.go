package intent

import "context"

// Via is where an owner's act came from: the console's pages, the command
// line, or an MCP client (an editor or an agent). The request journal and
// the interventions inbox keep it beside each act of the owner, so the
// history says how every write reached the launcher.
type Via string

// The ways an owner's act reaches the launcher.
const (
	ViaConsole Via = "console"
	ViaCLI     Via = "cli"
	ViaMCP     Via = "mcp"
)

// Vias lists them.
var Vias = []Via{ViaConsole, ViaCLI, ViaMCP}

type viaKey struct{}

// WithVia is ctx carrying where the owner's act it serves came from: the
// adapter that takes the act (a page, a command, a tool) says it once, and
// the stores that journal the act read it there.
func WithVia(ctx context.Context, v Via) context.Context {
	return context.WithValue(ctx, viaKey{}, v)
}

// ViaOf is where the act ctx serves came from; the console when no adapter
// said otherwise.
func ViaOf(ctx context.Context) Via {
	if v, ok := ctx.Value(viaKey{}).(Via); ok && v != "" {
		return v
	}
	return ViaConsole
}
