package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/migrations"
)

// maxManifest bounds the manifest an archive may begin with.
const maxManifest = 16 << 20

// Restored is what Restore did.
type Restored struct {
	Manifest Manifest
	// Root is the data folder made, as an absolute path.
	Root string
}

// Restore makes root, which must not exist or be an empty folder, the data
// folder the archive at from holds. Everything is written into a folder
// of its own beside root first; every part's SHA-256 is checked against
// the manifest, the stores' migrations against what this launcher knows
// and their pages by SQLite, and each repository is made again from its
// bundle; only then is that folder renamed to root. A restore refused or
// cut off half-way leaves root as it was, with nothing in it that serve
// would take for data. progress hears a line for each part.
func Restore(ctx context.Context, from, root string, progress io.Writer) (Restored, error) {
	if progress == nil {
		progress = io.Discard
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return Restored{}, refuse(refusal.Invalid, "The data folder %q is not a usable path.", root)
	}
	if err := checkEmpty(root); err != nil {
		return Restored{}, err
	}
	f, err := os.Open(from)
	if err != nil {
		return Restored{}, refuse(refusal.NotFound, "The archive %s cannot be opened: %v.", from, unwrapPath(err))
	}
	defer f.Close()
	tr, err := openArchive(f)
	if err != nil {
		return Restored{}, refuse(refusal.Invalid, "%s is not an Autoapp backup: %v.", from, err)
	}
	m, err := readManifest(tr, from)
	if err != nil {
		return Restored{}, err
	}

	parent := filepath.Dir(root)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Restored{}, fmt.Errorf("cannot create the folder %s: %v", parent, unwrapPath(err))
	}
	partial, err := os.MkdirTemp(parent, "."+filepath.Base(root)+".restore-partial-")
	if err != nil {
		return Restored{}, fmt.Errorf("cannot write in %s: %v", parent, unwrapPath(err))
	}
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(partial)
		}
	}()
	bundles := filepath.Join(partial, ".bundles")
	if err := os.Mkdir(bundles, 0o700); err != nil {
		return Restored{}, err
	}

	if err := extract(tr, m, partial, bundles, progress); err != nil {
		return Restored{}, err
	}
	for _, s := range stores {
		if err := checkStore(filepath.Join(partial, filepath.FromSlash(s.file)), s.name, s.set, m); err != nil {
			return Restored{}, err
		}
	}
	for _, p := range m.Parts {
		if p.Kind != KindRepository {
			continue
		}
		ws := filepath.Join(partial, "apps", p.App, "workspace")
		if err := workspace.FromBundle(ctx, filepath.Join(bundles, p.App+".bundle"), ws, p.Head); err != nil {
			return Restored{}, fmt.Errorf("the repository of %s could not be made from its bundle: %v", p.App, err)
		}
		fmt.Fprintf(progress, "application %s: its workspace made again at HEAD %s\n", p.App, shortHead(p.Head))
	}
	if err := os.RemoveAll(bundles); err != nil {
		return Restored{}, err
	}
	if err := checkEmpty(root); err != nil {
		return Restored{}, err
	}
	// rename(2) puts a folder over an empty one, or where there was none,
	// and fails whole when root is no longer empty (os.Rename refuses any
	// folder there).
	if err := unix.Rename(partial, root); err != nil {
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return Restored{}, refuse(refusal.Conflict, "%s is not empty any more; restore into a new or an empty folder, so that nothing there is overwritten.", root)
		}
		return Restored{}, fmt.Errorf("the restored data folder could not be put at %s: %v", root, err)
	}
	placed = true
	syncDir(parent)
	return Restored{Manifest: m, Root: root}, nil
}

// checkEmpty refuses a root that is anything but an empty folder or
// nothing at all.
func checkEmpty(root string) error {
	fi, err := os.Lstat(root)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("the data folder %s cannot be read: %v", root, unwrapPath(err))
	case !fi.IsDir():
		return refuse(refusal.Conflict, "%s is not a folder; restore into a new or an empty folder.", root)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("the data folder %s cannot be read: %v", root, unwrapPath(err))
	}
	if len(entries) > 0 {
		return refuse(refusal.Conflict, "%s is not empty; restore into a new or an empty folder, so that nothing there is overwritten.", root)
	}
	return nil
}

// openArchive reads a tar, gunzipping it first when it is gzipped.
func openArchive(r io.Reader) (*tar.Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil {
		return nil, errors.New("it is empty")
	}
	if bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, errors.New("its gzip header cannot be read")
		}
		return tar.NewReader(zr), nil
	}
	return tar.NewReader(br), nil
}

// readManifest reads and checks the archive's first entry: a manifest of
// a format and of store versions this launcher can restore.
func readManifest(tr *tar.Reader, from string) (Manifest, error) {
	notBackup := func(why string) error {
		return refuse(refusal.Invalid, "%s is not an Autoapp backup: %s.", from, why)
	}
	h, err := tr.Next()
	if err != nil || h.Name != ManifestName || h.Typeflag != tar.TypeReg || h.Size > maxManifest {
		return Manifest{}, notBackup("it does not begin with " + ManifestName)
	}
	raw, err := io.ReadAll(io.LimitReader(tr, maxManifest))
	if err != nil {
		return Manifest{}, notBackup("its manifest cannot be read")
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, notBackup("its manifest is not JSON")
	}
	if m.Format > Format {
		return Manifest{}, refuse(refusal.Invalid, "%s was written in archive format %d by launcher %s, newer than format %d, the newest this launcher reads; restore it with that launcher or a later one.",
			from, m.Format, m.LauncherVersion, Format)
	}
	if m.Format < 1 {
		return Manifest{}, notBackup("its manifest names no format")
	}
	for _, s := range stores {
		v, ok := m.Stores[s.name]
		if !ok {
			return Manifest{}, notBackup("its manifest names no version of the " + s.name + " store")
		}
		if err := notNewer(s.name, s.set, v.Version, m.LauncherVersion); err != nil {
			return Manifest{}, err
		}
	}
	seen := map[string]bool{}
	for _, p := range m.Parts {
		if err := allowed(p); err != nil {
			return Manifest{}, notBackup(err.Error())
		}
		if seen[p.Name] {
			return Manifest{}, notBackup("its manifest names " + p.Name + " twice")
		}
		seen[p.Name] = true
	}
	for _, s := range stores {
		if !seen[s.file] {
			return Manifest{}, notBackup("it holds no " + s.name + " store")
		}
	}
	return m, nil
}

// notNewer refuses a store at a migration this launcher has not got.
func notNewer(name string, set migrations.Set, version uint, by string) error {
	latest, err := migrations.Latest(set)
	if err != nil {
		return err
	}
	if version > latest {
		if by == "" {
			by = "another"
		}
		return refuse(refusal.Invalid, "The archive's %s store is at migration %d, newer than %d, the newest this launcher knows; restore it with the launcher that wrote it (%s) or a later one.",
			name, version, latest, by)
	}
	return nil
}

// allowed refuses a part that is not of a kind and at a place a backup
// writes: nothing an archive says is written anywhere else.
func allowed(p Part) error {
	parts := strings.Split(p.Name, "/")
	ok := false
	switch p.Kind {
	case KindStore:
		ok = p.Name == "launcher/intents.sqlite" || p.Name == "launcher/knowledge.sqlite"
	case KindSettings:
		ok = len(parts) == 2 && parts[0] == "launcher" && strings.HasSuffix(parts[1], ".json") && safeName(parts[1])
	case KindRepository:
		ok = len(parts) == 3 && parts[0] == "apps" && parts[1] == p.App && app.CheckID(p.App) == nil && parts[2] == "workspace.bundle"
	case KindFile:
		ok = len(parts) == 3 && (parts[0] == "apps" && app.CheckID(parts[1]) == nil || parts[0] == "evaluate" && safeName(parts[1])) &&
			strings.HasSuffix(parts[2], ".json") && safeName(parts[2])
	}
	if !ok {
		return fmt.Errorf("its manifest names a part %q of kind %q, which no backup writes", p.Name, p.Kind)
	}
	if len(p.SHA256) != sha256.Size*2 || p.Size < 0 {
		return fmt.Errorf("its manifest gives the part %s no SHA-256", p.Name)
	}
	return nil
}

// extract writes every part of the archive into partial, a repository's
// bundle into bundles, and refuses a part whose bytes are not those the
// manifest's SHA-256 names, an entry the manifest does not name, and an
// archive that ends before every part was read.
func extract(tr *tar.Reader, m Manifest, partial, bundles string, progress io.Writer) error {
	byName := map[string]Part{}
	for _, p := range m.Parts {
		byName[p.Name] = p
	}
	read := map[string]bool{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return refuse(refusal.Invalid, "The archive is damaged: it ends or breaks off after %d of its %d parts; nothing was restored.", len(read), len(m.Parts))
		}
		p, ok := byName[h.Name]
		if !ok || read[h.Name] || h.Typeflag != tar.TypeReg {
			return refuse(refusal.Invalid, "The archive is damaged: it holds %q, which its manifest does not name; nothing was restored.", h.Name)
		}
		dst := filepath.Join(partial, filepath.FromSlash(p.Name))
		if p.Kind == KindRepository {
			dst = filepath.Join(bundles, p.App+".bundle")
		}
		if err := writePart(tr, dst, p); err != nil {
			return err
		}
		read[h.Name] = true
		fmt.Fprintf(progress, "checked %s: %s, SHA-256 %s\n", p.Name, humanSize(p.Size), p.SHA256[:12])
	}
	for _, p := range m.Parts {
		if !read[p.Name] {
			return refuse(refusal.Invalid, "The archive is damaged: the part %s its manifest names is not in it; nothing was restored.", p.Name)
		}
	}
	return nil
}

// writePart writes the entry r to dst and refuses it when its bytes are
// not the part's.
func writePart(r io.Reader, dst string, p Part) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return refuse(refusal.Invalid, "The archive is damaged: it breaks off inside the part %s; nothing was restored.", p.Name)
		}
		return fmt.Errorf("%s could not be written: %v", dst, unwrapPath(err))
	}
	if n != p.Size || hex.EncodeToString(h.Sum(nil)) != p.SHA256 {
		return refuse(refusal.Invalid, "The archive is damaged: the part %s does not match the SHA-256 its manifest gives it; nothing was restored.", p.Name)
	}
	return nil
}

// checkStore refuses a store whose copy records another migration than
// the manifest says, one this launcher has not got, or pages SQLite finds
// damaged.
func checkStore(path, name string, set migrations.Set, m Manifest) error {
	v, dirty, err := migrations.Version(path)
	if err != nil {
		return refuse(refusal.Invalid, "The archive's %s store cannot be read: %v; nothing was restored.", name, err)
	}
	if err := notNewer(name, set, v, m.LauncherVersion); err != nil {
		return err
	}
	if want := m.Stores[name]; v != want.Version || dirty != want.Dirty {
		return refuse(refusal.Invalid, "The archive is damaged: its %s store is at migration %d, not %d as its manifest says; nothing was restored.", name, v, want.Version)
	}
	if err := migrations.IntegrityCheck(path); err != nil {
		return refuse(refusal.Invalid, "The archive's %s store is damaged: %v; nothing was restored.", name, err)
	}
	return nil
}
