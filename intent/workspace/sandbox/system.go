package sandbox

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

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
	// The install roots of the owner's go, python3, node and npm, wherever
	// they are (pyenv, nvm, asdf, ~/sdk, ~/.local…): read, never written,
	// and nothing else of the home folder.
	for _, tc := range Toolchains() {
		out = append(out, tc.Roots...)
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

// ToolchainPrograms are the programs whose install roots a build and a
// preview may read wherever the owner installed them.
var ToolchainPrograms = []string{"go", "python3", "node", "npm"}

// Toolchain is one of ToolchainPrograms as the owner's PATH resolves it:
// where it was found, the folder of its real executable (put first on a
// stage's PATH, so the program the owner runs is the one a stage runs,
// past a version manager's shim), the folders it is installed in, which
// the sandbox reads, and its version.
type Toolchain struct {
	Program, Found, Bin string
	Roots               []string
	Version             string
}

// Toolchains are the owner's toolchains, found once a process: each
// program is asked where it really is (go its GOROOT, python3 its
// executable and prefixes, node its executable), as a version manager's
// shim hides it. A root that is the home folder or holds it is never one.
var Toolchains = sync.OnceValue(func() []Toolchain {
	home, _ := os.UserHomeDir()
	var out []Toolchain
	for _, name := range ToolchainPrograms {
		found, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		tc := Toolchain{Program: name, Found: found}
		real := found
		if r, err := filepath.EvalSymlinks(found); err == nil {
			real = r
		}
		var roots []string
		switch name {
		case "go":
			if lines := ask(found, "env", "GOROOT"); len(lines) > 0 {
				roots = append(roots, lines[0])
				real = filepath.Join(lines[0], "bin", "go")
			}
			tc.Version = first(ask(found, "env", "GOVERSION"))
		case "python3":
			lines := ask(found, "-c", "import sys; print(sys.executable); print(sys.base_prefix); print(sys.prefix); print(sys.version.split()[0])")
			if len(lines) == 4 {
				real = lines[0]
				if r, err := filepath.EvalSymlinks(real); err == nil {
					roots = append(roots, installRoot(r))
				}
				roots = append(roots, lines[1], lines[2], installRoot(real))
				tc.Version = "Python " + lines[3]
			}
		case "node":
			if lines := ask(found, "-p", "process.execPath + '\\n' + process.version"); len(lines) == 2 {
				real = lines[0]
				if r, err := filepath.EvalSymlinks(real); err == nil {
					real = r
				}
				tc.Version = "Node " + lines[1]
			}
			roots = append(roots, installRoot(real))
		case "npm":
			// <prefix>/lib/node_modules/npm/bin/npm-cli.js, or a shim.
			if i := strings.Index(real, "/lib/node_modules/"); i > 0 {
				roots = append(roots, real[:i])
			} else {
				roots = append(roots, installRoot(real))
			}
			if v := first(ask(found, "--version")); v != "" {
				tc.Version = "npm " + v
			}
		}
		tc.Bin = filepath.Dir(real)
		for _, r := range roots {
			r = filepath.Clean(r)
			if !filepath.IsAbs(r) || r == "/" || within(home, r) || !exists(r) {
				continue
			}
			if !slices.Contains(tc.Roots, r) && !underAny(r, tc.Roots) {
				tc.Roots = append(tc.Roots, r)
			}
		}
		out = append(out, tc)
	}
	return out
})

// installRoot is the folder a program's executable is installed under:
// <root>/bin/<program> gives <root>, anything else its own folder.
func installRoot(exe string) string {
	bin := filepath.Dir(exe)
	if filepath.Base(bin) == "bin" {
		return filepath.Dir(bin)
	}
	return bin
}

// ask runs a toolchain program on the host with a few seconds to answer,
// and answers the lines it printed.
func ask(program string, args ...string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, program, args...).Output()
	if err != nil {
		return nil
	}
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func first(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// ToolchainPath is path with the folders of the owner's toolchains that
// it does not name (those a shim or a link hides) put first.
func ToolchainPath(path string) string {
	dirs := filepath.SplitList(path)
	var front []string
	for _, tc := range Toolchains() {
		if tc.Bin != "" && !slices.Contains(dirs, tc.Bin) && !slices.Contains(front, tc.Bin) {
			front = append(front, tc.Bin)
		}
	}
	return strings.Join(append(front, dirs...), string(filepath.ListSeparator))
}
