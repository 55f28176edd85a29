package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"autoapp/cmd/autoapp/launcher"
)

// clock is the one clock of every command: given once, here.
var clock = time.Now

// open builds the launcher over root for a command that changes the
// stores: the same services `autoapp serve` runs, their log kept out of
// the event log. Every error is one sentence.
func open(root string) (*launcher.Launcher, error) {
	return launcher.New(root, clock, nil, launcher.Options{Quiet: true})
}

// requireData refuses a data folder that holds no Autoapp data, or whose
// stores are reached through a symbolic link, before anything is created
// there: a command that only reads, given a mistyped --root, must not make
// and migrate a new data folder.
func requireData(root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("the data folder %q is not a usable path: %v", root, err)
	}
	dir := filepath.Join(abs, "launcher")
	for _, p := range []string{dir, filepath.Join(dir, "intents.sqlite"), filepath.Join(dir, "knowledge.sqlite")} {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return fmt.Errorf("There is no Autoapp data in %s.", abs)
		case fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; Autoapp reads only the real files of its data folder.", p)
		}
	}
	return nil
}
