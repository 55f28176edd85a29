package workspace

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
)

// The host reads a few of git's loose objects itself, to answer without
// starting git what HEAD's commit holds (its manifest, see committed.go):
// zlib-compressed, named by the SHA-1 of their header and content, and
// checked to be what their name says. git writes every object; a packed
// one, or anything unexpected, answers "not here", and git is asked.

// objectID is a SHA-1 object name.
type objectID [sha1.Size]byte

func (id objectID) String() string { return hex.EncodeToString(id[:]) }

func parseObjectID(s string) (objectID, bool) {
	var id objectID
	if len(s) != 2*sha1.Size || !objectName(s) {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(s))
	return id, err == nil
}

// hashObject is the name git gives an object of kind with content.
func hashObject(kind string, content []byte) objectID {
	h := sha1.New()
	h.Write([]byte(kind + " " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	var id objectID
	h.Sum(id[:0])
	return id
}

// maxObject bounds an object read back: the largest file the engineer
// may change, and then some.
const maxObject = MaxFileBytes + 1<<20

// readLoose reads the loose object id: its kind and content. false when
// it is not stored loose, or is not what its name says.
func readLoose(root files, id objectID) (string, []byte, bool) {
	s := id.String()
	compressed, ok := root.read(".git/objects/"+s[:2]+"/"+s[2:], maxObject)
	if !ok {
		return "", nil, false
	}
	z, err := zlib.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return "", nil, false
	}
	defer z.Close()
	raw, err := io.ReadAll(io.LimitReader(z, maxObject+64))
	if err != nil {
		return "", nil, false
	}
	header, content, ok := bytes.Cut(raw, []byte{0})
	if !ok {
		return "", nil, false
	}
	kind, size, ok := strings.Cut(string(header), " ")
	n, err := strconv.Atoi(size)
	if !ok || err != nil || n != len(content) || hashObject(kind, content) != id {
		return "", nil, false
	}
	return kind, content, true
}

// The modes git records, as numbers.
const (
	gitFile    = 0o100644
	gitExec    = 0o100755
	gitLink    = 0o120000
	gitGitlink = 0o160000
	gitTree    = 0o040000
)

// treeItem is one entry of a tree object.
type treeItem struct {
	name string
	mode uint32
	id   objectID
}

// decodeTree reads a tree object's content.
func decodeTree(content []byte) ([]treeItem, bool) {
	var items []treeItem
	for len(content) > 0 {
		sp := bytes.IndexByte(content, ' ')
		if sp < 0 {
			return nil, false
		}
		mode, err := strconv.ParseUint(string(content[:sp]), 8, 32)
		if err != nil {
			return nil, false
		}
		content = content[sp+1:]
		nul := bytes.IndexByte(content, 0)
		if nul < 0 || len(content) < nul+1+sha1.Size {
			return nil, false
		}
		it := treeItem{name: string(content[:nul]), mode: uint32(mode)}
		copy(it.id[:], content[nul+1:])
		items = append(items, it)
		content = content[nul+1+sha1.Size:]
	}
	return items, true
}

// commitTree is the tree a loose commit records.
func commitTree(root files, commit objectID) (objectID, bool) {
	kind, content, ok := readLoose(root, commit)
	if !ok || kind != "commit" {
		return objectID{}, false
	}
	line, _, _ := bytes.Cut(content, []byte{'\n'})
	hash, found := strings.CutPrefix(string(line), "tree ")
	if !found {
		return objectID{}, false
	}
	return parseObjectID(hash)
}

// looseBlob is the content of the loose blob id.
func looseBlob(root files, id objectID) ([]byte, bool) {
	kind, content, ok := readLoose(root, id)
	return content, ok && kind == "blob"
}

// looseTree reads the loose tree object id.
func looseTree(root files, id objectID) ([]treeItem, bool) {
	kind, content, ok := readLoose(root, id)
	if !ok || kind != "tree" {
		return nil, false
	}
	return decodeTree(content)
}
