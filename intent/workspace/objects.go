package workspace

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The host writes its own commits' objects as git does, without starting
// git (see native.go): loose objects, zlib-compressed, named by the SHA-1
// of their header and content. Only what it wrote itself, or what git
// wrote loose, is read back; a packed object answers "not here", and git
// is asked instead.

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
	h.Write(objectHeader(kind, len(content)))
	h.Write(content)
	var id objectID
	h.Sum(id[:0])
	return id
}

// objectHeader is what precedes an object's content: "<kind> <size>\0".
func objectHeader(kind string, size int) []byte {
	b := append([]byte(kind), ' ')
	b = strconv.AppendInt(b, int64(size), 10)
	return append(b, 0)
}

// compressors keep zlib's writers, whose tables cost more to make than a
// small object costs to compress.
var compressors = sync.Pool{New: func() any {
	z, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return z
}}

// objectPath is where the loose object id is in the objects folder
// (.git/objects, opened as a root of its own).
func objectPath(id objectID) string {
	s := id.String()
	return s[:2] + "/" + s[2:]
}

// openObjects opens the repository's objects folder as a root of its own:
// each object's path is then two names deep, not four.
func openObjects(root *os.Root) (*os.Root, bool) {
	info, err := root.Lstat(".git/objects")
	if err != nil || !info.IsDir() {
		return nil, false
	}
	objects, err := root.OpenRoot(".git/objects")
	return objects, err == nil
}

// maxObject bounds an object read back: the largest file the engineer
// may change, and then some.
const maxObject = MaxFileBytes + 1<<20

// readLoose reads the loose object id: its kind and content. false when
// it is not stored loose, or is not what its name says.
func readLoose(root files, id objectID) (string, []byte, bool) {
	compressed, ok := root.read(".git/objects/"+objectPath(id), maxObject)
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

// writeLoose stores an object of kind with content loose, unless it is
// there already, and returns its name. The file is written beside its
// place and renamed there, read-only, as git does. Its folder is opened
// as a root of its own, so that each step is one name deep.
func writeLoose(objects *os.Root, kind string, content []byte) (objectID, error) {
	id := hashObject(kind, content)
	hex := id.String()
	dir, name := hex[:2], hex[2:]
	fan, err := objects.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := objects.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return id, err
		}
		fan, err = objects.OpenRoot(dir)
	}
	if err != nil {
		return id, err
	}
	defer fan.Close()
	if info, err := fan.Lstat(name); err == nil && info.Mode().IsRegular() {
		return id, nil
	}
	var buf bytes.Buffer
	z := compressors.Get().(*zlib.Writer)
	defer compressors.Put(z)
	z.Reset(&buf)
	z.Write(objectHeader(kind, len(content)))
	z.Write(content)
	if err := z.Close(); err != nil {
		return id, err
	}
	tmp := fmt.Sprintf("tmp_obj_autoapp_%08x", rand.Uint32())
	f, err := fan.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return id, err
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Another writer may have stored the object first: the same bytes.
		err = fan.Rename(tmp, name)
	}
	if err != nil {
		fan.Remove(tmp)
	}
	return id, err
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

// encodeTree is a tree object's content. Entries are in git's order: by
// name, a tree's name compared as if it ended in "/".
func encodeTree(items []treeItem) []byte {
	key := func(it treeItem) string {
		if it.mode == gitTree {
			return it.name + "/"
		}
		return it.name
	}
	slices.SortFunc(items, func(a, b treeItem) int { return strings.Compare(key(a), key(b)) })
	var buf bytes.Buffer
	for _, it := range items {
		buf.WriteString(strconv.FormatUint(uint64(it.mode), 8))
		buf.WriteByte(' ')
		buf.WriteString(it.name)
		buf.WriteByte(0)
		buf.Write(it.id[:])
	}
	return buf.Bytes()
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

// cleanMessage tidies a commit message as git commit -m does: trailing
// spaces cut from each line, runs of empty lines made one, none at the
// start or the end, and a final newline.
func cleanMessage(paragraphs ...string) string {
	var out []string
	blank := false
	for _, p := range paragraphs {
		if len(out) > 0 {
			blank = true
		}
		for line := range strings.SplitSeq(p, "\n") {
			line = strings.TrimRight(line, " \t\r\v\f")
			if line == "" {
				blank = len(out) > 0
				continue
			}
			if blank {
				out = append(out, "")
				blank = false
			}
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// encodeCommit is a commit object's content.
func encodeCommit(tree, parent objectID, author signature, committer signature, message string) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "tree %s\nparent %s\n", tree, parent)
	fmt.Fprintf(&buf, "author %s\n", ident(author))
	fmt.Fprintf(&buf, "committer %s\n\n", ident(committer))
	buf.WriteString(message)
	return buf.Bytes()
}

// ident is "Name <email> seconds +zone", as git writes a person.
func ident(s signature) string {
	return fmt.Sprintf("%s <%s> %d %s", s.name, s.email, s.when.Unix(), s.when.Format("-0700"))
}
