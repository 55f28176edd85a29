// Package atomicfile replaces a file whole: a crash leaves the old file or
// the new one, never half of either. The launcher's settings beside the
// stores (intent-models.json, limits.json, prices.json, session.json,
// sandbox.json, the providers) and the owner's autoapp.json are written
// through Write, which waits for the disk; an application's
// candidate.json, rewritten several times a task, through Replace, which
// does not. Kept keeps what was read of such a file while it is the same.
//
// It imports nothing of autoapp, so every package that writes such a file,
// the sandbox included, can use it.
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// Write replaces path with b: b goes to a temporary file beside it,
// readable by this user only, which is synced and renamed over path; then
// the folder is synced so the rename itself survives a crash. A missing
// folder is made, readable by this user only.
func Write(path string, b []byte) error {
	return write(path, b, true)
}

// Replace replaces path with b as Write does, without waiting for the
// disk: a crash of the launcher leaves the old file or the new one; a
// crash of the machine may leave the old one, as the stores' last
// transactions may be lost with it (SQLite's synchronous=NORMAL). Waiting
// twice for the disk cost a trivial task more than all else here.
func Replace(path string, b []byte) error {
	return write(path, b, false)
}

func write(path string, b []byte, sync bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// CreateTemp makes the file with mode 0600.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	renamed = true
	if !sync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
