package workspace

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"autoapp/intent/refusal"
)

// gitOwnFiles are the files of a repository every git command may read,
// or append to, from .git.
var gitOwnFiles = []string{"HEAD", "index", "config", "packed-refs", "logs/HEAD", "info/exclude", "info/attributes", "objects/info/alternates", "commondir"}

// checkGitFiles refuses to start git in dir when one of git's own files
// there, or the branch HEAD names, is anything but a regular file (a
// named pipe above all): git would open it and wait for a writer, and
// the host with it, holding the workspace's lock, until the command's
// timeout. The engineer's code can write .git; an absent file, or a .git
// that is not a folder, is git's to judge.
func checkGitFiles(dir string) error {
	git := filepath.Join(dir, ".git")
	names := gitOwnFiles
	if ref, ok := headRef(git); ok {
		names = append(names[:len(names):len(names)], ref, "logs/"+ref)
	}
	for _, name := range names {
		info, err := os.Lstat(filepath.Join(git, filepath.FromSlash(name)))
		if err != nil || info.Mode().IsRegular() {
			continue
		}
		return refusal.Problems{{Message: fmt.Sprintf(".git/%s is %s, not a regular file: the host runs no git in a repository whose own files are not regular files",
			name, kindOf(info.Mode()))}}
	}
	return nil
}

// headRef is the branch .git/HEAD names, when it is a regular file naming
// one plainly.
func headRef(git string) (string, bool) {
	fd, err := unix.Open(filepath.Join(git, "HEAD"), openFlags, 0)
	if err != nil {
		return "", false
	}
	f := os.NewFile(uintptr(fd), "HEAD")
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<10))
	if err != nil {
		return "", false
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	if !ok || !refName(ref) {
		return "", false
	}
	return ref, true
}
