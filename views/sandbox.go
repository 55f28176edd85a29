package views

// SandboxView is how the engineer's code runs, as Settings and the
// Applications pages say it.
type SandboxView struct {
	// Sentence says it in one sentence.
	Sentence string
	// Confined: builds and previews run in the sandbox. Refused: the
	// machine cannot confine and the owner has not chosen to run
	// unconfined, so nothing is built.
	Confined, Refused bool
	// Unconfined is the owner's choice in Settings.
	Unconfined bool
	// Problem says why the owner's choice could not be read.
	Problem string
	// BuildLimits and PreviewLimits say, a line each, what a build stage
	// and a preview may use in the sandbox.
	BuildLimits, PreviewLimits []string
	// Toolchains are the programs of the owner's a stage finds, each
	// with its version and the folders the sandbox reads it from.
	Toolchains []ToolchainView
	// Missing names the toolchain programs the owner's PATH does not have.
	Missing []string
}

// ToolchainView is one toolchain program as the sandbox sees it.
type ToolchainView struct {
	Program, Version, Found, Roots string
}
