package sandbox

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// toolchain are the folders of PATH outside the host's home, and the root
// of the host's go wherever it is, so a stage finds the programs it names.
func toolchain() []string {
	home, _ := os.UserHomeDir()
	var out []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		// Only a folder this user can enter: bubblewrap refuses to bind
		// one it cannot look into (another user's home on PATH, say).
		if filepath.IsAbs(d) && !within(d, home) && unix.Access(d, unix.R_OK|unix.X_OK) == nil {
			out = append(out, filepath.Clean(d))
		}
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		if real, err := filepath.EvalSymlinks(goBin); err == nil {
			// <goroot>/bin/go: the whole toolchain, its standard library included.
			if root := filepath.Dir(filepath.Dir(real)); root != "/" && root != home && filepath.Base(filepath.Dir(real)) == "bin" &&
				exists(filepath.Join(root, "src", "runtime")) {
				out = append(out, root)
			}
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// privateEntries lists what of dir is not for every user: its folders
// and files that anyone may not read (a folder: enter), looking inside
// the public folders that hold something private. Links are left alone:
// inside the sandbox a link out of /etc leads nowhere, and one inside
// leads to an entry this list covers.
func privateEntries(dir string) (dirs, files []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		info, err := os.Lstat(p)
		if err != nil || info.Mode()&os.ModeSymlink != 0 {
			continue
		}
		perm := info.Mode().Perm()
		switch {
		case info.IsDir() && (perm&0o004 == 0 || perm&0o001 == 0):
			dirs = append(dirs, p)
		case info.IsDir() && holdsPrivate(p):
			d, f := privateEntries(p)
			dirs, files = append(dirs, d...), append(files, f...)
		case !info.IsDir() && perm&0o004 == 0:
			files = append(files, p)
		}
	}
	return dirs, files
}

// holdsPrivate says something under dir is not for every user.
func holdsPrivate(dir string) bool {
	private := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			private = true
			return filepath.SkipAll
		}
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm()&0o004 == 0 || info.IsDir() && info.Mode().Perm()&0o001 == 0 {
			private = true
			return filepath.SkipAll
		}
		return nil
	})
	return private
}
