package workspace

import (
	"bytes"
	"compress/zlib"
	"io"
	"strings"
)

// headFromFiles reads the commit HEAD names from the repository's own
// files, through the workspace's root, without starting git: HEAD, the
// branch it names (loose or packed), and the commit's loose object, which
// must exist. Anything it does not expect — a worktree's .git file, an
// unborn branch, a packed commit, a name it would have to interpret —
// answers false, and git is asked instead. The files may have been
// written by the engineer's code, so nothing in them is trusted beyond a
// name and a hash, each checked for its shape.
func headFromFiles(root files) (string, bool) {
	head, ok := readSmall(root, ".git/HEAD")
	if !ok {
		return "", false
	}
	head = strings.TrimSpace(head)
	hash := head
	if ref, isRef := strings.CutPrefix(head, "ref: "); isRef {
		if !refName(ref) {
			return "", false
		}
		if hash, ok = readSmall(root, ".git/"+ref); ok {
			hash = strings.TrimSpace(hash)
		} else if hash, ok = packedRef(root, ref); !ok {
			return "", false
		}
	}
	if !looseCommit(root, hash) {
		return "", false
	}
	return hash, true
}

// looseCommit says hash names a commit stored as a loose object (what the
// host's commits are until git packs them): the object's file is
// there and its header says commit. Anything else, git is asked.
func looseCommit(root files, hash string) bool {
	if !objectName(hash) {
		return false
	}
	compressed, ok := root.read(".git/objects/"+hash[:2]+"/"+hash[2:], maxObject)
	if !ok {
		return false
	}
	z, err := zlib.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return false
	}
	defer z.Close()
	header := make([]byte, len("commit "))
	if _, err := io.ReadFull(z, header); err != nil {
		return false
	}
	return string(header) == "commit "
}

// readSmall reads a regular file of at most 64 KiB under root.
func readSmall(root files, name string) (string, bool) {
	b, ok := root.read(name, 64<<10)
	return string(b), ok
}

// packedRef finds ref in .git/packed-refs.
func packedRef(root files, ref string) (string, bool) {
	text, ok := readSmall(root, ".git/packed-refs")
	if !ok {
		return "", false
	}
	for line := range strings.Lines(text) {
		hash, name, found := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
		if found && name == ref {
			return hash, true
		}
	}
	return "", false
}

// refName is a branch name HEAD may point at: refs/heads/ and plain
// segments, nothing git would have to interpret.
func refName(ref string) bool {
	rest, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || rest == "" || len(ref) > 200 {
		return false
	}
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".lock") {
			return false
		}
		for _, c := range seg {
			if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// objectName is a full SHA-1 or SHA-256 object name in lower-case hex.
func objectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
