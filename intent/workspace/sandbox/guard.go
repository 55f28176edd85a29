package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"autoapp/intent/atomicfile"
	"autoapp/intent/refusal"
)

// SettingFile is the owner's choice, in <root>/launcher.
const SettingFile = "sandbox.json"

// Setting is sandbox.json: whether the owner lets the engineer's code run
// unconfined.
type Setting struct {
	Unconfined bool `json:"unconfined"`
}

// State is how the engineer's code runs now, for the pages.
type State struct {
	Machine Machine
	// Unconfined is the owner's choice to run it without the sandbox.
	Unconfined bool
	// Problem says why sandbox.json was not read; the code then runs
	// confined, or not at all.
	Problem string
}

// Confined says builds and previews run in the sandbox.
func (s State) Confined() bool { return s.Machine.Confines() && !s.Unconfined }

// Refused says nothing of the engineer's may run: the machine cannot
// confine and the owner has not said to run it unconfined.
func (s State) Refused() bool { return !s.Machine.Confines() && !s.Unconfined }

// Sentence says in one sentence how the engineer's code runs.
func (s State) Sentence() string {
	switch {
	case s.Confined():
		return "Builds and previews run in a sandbox (" + s.Machine.String() + "): they reach the toolchain and their own application folder, nothing of yours, and everything they start ends with them."
	case s.Unconfined:
		return "Builds and previews run unconfined, as you chose in Settings: the engineer's code can read and write everything this user can, your keys and stores included."
	}
	return "This machine cannot confine the engineer's code (" + s.Machine.Why + "), so nothing is built or previewed until you turn on Run unconfined in Settings."
}

// Guard starts the processes of applications as the owner chose: confined
// when the machine can, unconfined only when the owner turned that on in
// Settings, and otherwise not at all. It is safe for concurrent use.
type Guard struct {
	machine Machine
	file    string
}

// NewGuard is the guard of the data folder root on machine m.
func NewGuard(root string, m Machine) *Guard {
	return &Guard{machine: m, file: filepath.Join(root, "launcher", SettingFile)}
}

// State reads the owner's choice afresh, so a change in Settings holds
// from the next process on.
func (g *Guard) State() State {
	st := State{Machine: g.machine}
	b, err := os.ReadFile(g.file)
	if errors.Is(err, fs.ErrNotExist) {
		return st
	}
	var set Setting
	if err == nil {
		err = json.Unmarshal(b, &set)
	}
	if err != nil {
		st.Problem = fmt.Sprintf("%s could not be read (%v), so the sandbox stays on.", SettingFile, err)
		return st
	}
	st.Unconfined = set.Unconfined
	return st
}

// Ready refuses, with a sentence, when nothing of the engineer's may run.
func (g *Guard) Ready() error {
	if st := g.State(); st.Refused() {
		return &refusal.Error{Code: refusal.Conflict, Message: st.Sentence()}
	}
	return nil
}

// SetUnconfined keeps the owner's choice, written whole
// (atomicfile.Write).
func (g *Guard) SetUnconfined(on bool) error {
	b, err := json.MarshalIndent(Setting{Unconfined: on}, "", "  ")
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if err := atomicfile.Write(g.file, append(b, '\n')); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// Start starts cmd from an application: confined to p, or as it is when
// the owner chose to run unconfined, or not at all.
func (g *Guard) Start(cmd *exec.Cmd, p Policy) (*Process, error) {
	st := g.State()
	switch {
	case st.Refused():
		return nil, &refusal.Error{Code: refusal.Conflict, Message: st.Sentence()}
	case st.Unconfined:
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &Process{cmd: cmd, port: p.Port}, nil
	}
	return Start(cmd, g.machine, p)
}

// StartHost starts a host program that works on an application's files,
// such as git over its workspace: confined to p whenever the machine can,
// whatever the owner chose, since those files may hold what the
// engineer's code wrote (a repository's own configuration can name
// programs to run). On a machine that cannot confine it runs as it is:
// there, nothing of the engineer's ran unless the owner allowed it. The
// caller waits for cmd itself.
func StartHost(cmd *exec.Cmd, p Policy) error {
	m := Probe()
	if !m.Confines() {
		return cmd.Start()
	}
	p.Limits = nil
	_, err := Start(cmd, m, p)
	return err
}
