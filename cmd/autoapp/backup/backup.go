// Package backup carries a data folder to another machine. Write puts
// what the folder holds into one archive while `autoapp serve` goes on
// serving it: both stores as SQLite copies them, every application's git
// repository as a bundle, the launcher's settings, and a manifest naming
// each part with its SHA-256. Restore makes a new data folder of such an
// archive, every part checked before anything is put where serve would
// take it for data.
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"autoapp/executor/ai/provider"
	"autoapp/intent/app"
	"autoapp/intent/refusal"
	"autoapp/intent/workspace"
	"autoapp/migrations"
)

// Format is the version of the archive's layout this launcher writes and
// reads; an archive of a later one is refused.
const Format = 1

// ManifestName is the archive's first entry.
const ManifestName = "manifest.json"

// The kinds of part an archive holds.
const (
	// KindStore is a SQLite store, copied with VACUUM INTO.
	KindStore = "store"
	// KindRepository is an application's git repository as a bundle;
	// it is restored into apps/<app>/workspace.
	KindRepository = "repository"
	// KindSettings is a file of <root>/launcher: providers, models,
	// prices, limits, notifications and the rest of Settings.
	KindSettings = "settings"
	// KindFile is any other file of the data folder, kept as it is.
	KindFile = "file"
)

// Manifest is what an archive holds, written as its first entry.
type Manifest struct {
	Format          int       `json:"format"`
	LauncherVersion string    `json:"launcherVersion"`
	CreatedAt       time.Time `json:"createdAt"`
	// WithKeys says whether the providers' API keys are in the archive.
	WithKeys bool `json:"withKeys"`
	// Stores are the migration versions of the stores, by name
	// ("intents", "knowledge").
	Stores map[string]StoreVersion `json:"stores"`
	Parts  []Part                  `json:"parts"`
}

// StoreVersion is the migration a store's copy records.
type StoreVersion struct {
	Version uint `json:"version"`
	Dirty   bool `json:"dirty,omitempty"`
}

// Part is one entry of the archive after the manifest.
type Part struct {
	// Name is the entry's name in the archive, a slash-separated path
	// that is also where the part goes in the data folder (a repository's
	// bundle is made into the workspace beside it).
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// App and Head are a repository's: the application it is the
	// workspace of, and what HEAD named (a branch, or a commit).
	App  string `json:"app,omitempty"`
	Head string `json:"head,omitempty"`
}

// The stores, by the name the manifest gives them, in the order they are
// copied: the intents store first, since the knowledge store and the
// repositories only ever go on from what it records (a copy taken later
// holds every turn and commit an earlier one names).
var stores = []struct {
	name string
	set  migrations.Set
	file string
}{
	{"intents", migrations.Intents, "launcher/intents.sqlite"},
	{"knowledge", migrations.Knowledge, "launcher/knowledge.sqlite"},
}

// Options are what Write is told beyond the folder and the file.
type Options struct {
	// WithKeys puts the providers' API keys in the archive.
	WithKeys bool
	// Version is the launcher's version, kept in the manifest.
	Version string
	Now     func() time.Time
	// Progress hears one line for each part as it is written.
	Progress io.Writer
}

// Written is what Write did.
type Written struct {
	Manifest Manifest
	// Keys is how many API keys the providers file held: in the archive
	// when Manifest.WithKeys, left out otherwise.
	Keys int
	// Size is the archive's size in bytes.
	Size int64
}

func refuse(code refusal.Code, format string, args ...any) *refusal.Error {
	return refusal.Errorf(code, format, args...)
}

// Write writes the data folder root into a new archive at to, a tar file,
// gzipped when its name ends in .gz or .tgz, while a server may go on
// serving root: each store is copied as one moment left it, each
// repository is bundled from refs read once, and every other file is one
// that is replaced whole when it changes. The archive appears under its
// name only once it is whole.
func Write(ctx context.Context, root, to string, o Options) (Written, error) {
	if o.Now == nil {
		return Written{}, errors.New("backup: no clock given")
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return Written{}, refuse(refusal.Invalid, "The data folder %q is not a usable path.", root)
	}
	to, err = filepath.Abs(to)
	if err != nil {
		return Written{}, refuse(refusal.Invalid, "The archive %q is not a usable path.", to)
	}
	if _, err := os.Lstat(to); err == nil {
		return Written{}, refuse(refusal.Conflict, "%s is there already; give --to the name of a new file.", to)
	}
	if fi, err := os.Stat(filepath.Dir(to)); err != nil || !fi.IsDir() {
		return Written{}, refuse(refusal.Invalid, "There is no folder %s to write the archive in.", filepath.Dir(to))
	}
	staging, err := os.MkdirTemp(filepath.Dir(to), ".autoapp-backup-")
	if err != nil {
		return Written{}, fmt.Errorf("cannot write in %s: %v", filepath.Dir(to), unwrapPath(err))
	}
	defer os.RemoveAll(staging)

	b := &batch{staging: staging, progress: progress, now: o.Now}
	m := Manifest{Format: Format, LauncherVersion: o.Version, CreatedAt: o.Now().UTC().Truncate(time.Second), WithKeys: o.WithKeys,
		Stores: map[string]StoreVersion{}}
	var apps []app.App
	for _, s := range stores {
		var v StoreVersion
		err := b.stage(Part{Name: s.file, Kind: KindStore}, func(dst string) error {
			if err := migrations.Snapshot(ctx, filepath.Join(root, filepath.FromSlash(s.file)), dst); err != nil {
				return err
			}
			var err error
			if v.Version, v.Dirty, err = migrations.Version(dst); err != nil {
				return err
			}
			// The applications are those of the copy, read before it
			// is hashed: opening a store may change its header.
			if s.set == migrations.Intents {
				apps, err = b.apps(ctx, dst, root)
			}
			return err
		}, func(p Part) string {
			return fmt.Sprintf("%s store (migration %d)", s.name, v.Version)
		})
		if err != nil {
			return Written{}, fmt.Errorf("the %s store could not be copied: %v", s.name, err)
		}
		m.Stores[s.name] = v
	}
	if err := b.repositories(ctx, root, apps); err != nil {
		return Written{}, err
	}
	keys, err := b.settings(root, o.WithKeys)
	if err != nil {
		return Written{}, err
	}
	if err := b.evaluations(root); err != nil {
		return Written{}, err
	}
	m.Parts = b.parts

	size, err := writeArchive(to, staging, m, o.Now())
	if err != nil {
		return Written{}, err
	}
	return Written{Manifest: m, Keys: keys, Size: size}, nil
}

// batch is the parts staged so far, each a file under staging named as
// in the archive.
type batch struct {
	staging  string
	progress io.Writer
	now      func() time.Time
	parts    []Part
}

// stage makes the part p with fill, given the file it writes, records its
// size and hash, and says so on the progress line what names it.
func (b *batch) stage(p Part, fill func(dst string) error, what func(Part) string) error {
	dst := filepath.Join(b.staging, filepath.FromSlash(p.Name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if err := fill(dst); err != nil {
		return err
	}
	size, sum, err := hashFile(dst)
	if err != nil {
		return err
	}
	p.Size, p.SHA256 = size, sum
	b.parts = append(b.parts, p)
	fmt.Fprintf(b.progress, "%s: %s, %s\n", what(p), p.Name, humanSize(p.Size))
	return nil
}

// apps lists the applications the intents store's copy at path knows.
func (b *batch) apps(ctx context.Context, path, root string) ([]app.App, error) {
	db, err := migrations.OpenReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("the copy cannot be read: %v", err)
	}
	defer db.Close()
	list, err := app.NewService(db, root, b.now, workspace.Repositories{Now: b.now}).List(ctx)
	if err != nil {
		return nil, fmt.Errorf("the applications cannot be listed: %v", err)
	}
	return list, nil
}

// repositories bundles the workspace of every application in list, with
// the files beside it (candidate.json).
func (b *batch) repositories(ctx context.Context, root string, list []app.App) error {
	apps := app.NewService(nil, root, b.now, workspace.Repositories{Now: b.now})
	for _, a := range list {
		ws := apps.WorkspaceDir(a.ID)
		if _, err := os.Lstat(filepath.Join(ws, ".git")); err != nil {
			fmt.Fprintf(b.progress, "application %s: it has no workspace at %s; only its records are carried\n", a.ID, ws)
			continue
		}
		head, err := workspace.HeadName(ctx, ws)
		if err != nil {
			return fmt.Errorf("the workspace of %s cannot be read: %v", a.ID, err)
		}
		p := Part{Name: "apps/" + a.ID + "/workspace.bundle", Kind: KindRepository, App: a.ID, Head: head}
		err = b.stage(p, func(dst string) error {
			f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			if err := workspace.Bundle(ctx, ws, f); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}, func(Part) string {
			return "application " + a.ID + " (its git repository, HEAD " + shortHead(head) + ")"
		})
		if err != nil {
			return fmt.Errorf("the repository of %s could not be bundled: %v", a.ID, err)
		}
		if err := b.files(apps.Dir(a.ID), "apps/"+a.ID, KindFile, "application "+a.ID, nil); err != nil {
			return err
		}
	}
	return nil
}

// settings copies every settings file of <root>/launcher, the providers
// file without its keys unless withKeys, and answers how many keys that
// file held.
func (b *batch) settings(root string, withKeys bool) (int, error) {
	keys := 0
	err := b.files(filepath.Join(root, "launcher"), "launcher", KindSettings, "settings", func(name string, data []byte) ([]byte, string, error) {
		if name != provider.FileName {
			return data, "settings", nil
		}
		var err error
		if keys, err = provider.Keys(data); err != nil || withKeys || keys == 0 {
			return data, "settings (the providers)", err
		}
		data, _, err = provider.WithoutKeys(data)
		return data, "settings (the providers, their API keys left out)", err
	})
	return keys, err
}

// evaluations copies what each evaluation kept of itself
// (<root>/evaluate/<stamp>/evaluation.json); its run folders, fresh clones
// made for it, stay behind, as a replay's do.
func (b *batch) evaluations(root string) error {
	entries, err := os.ReadDir(filepath.Join(root, "evaluate"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the evaluations cannot be listed: %v", unwrapPath(err))
	}
	for _, e := range entries {
		if !e.IsDir() || !safeName(e.Name()) {
			continue
		}
		src := filepath.Join(root, "evaluate", e.Name(), "evaluation.json")
		if fi, err := os.Lstat(src); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := b.copy(src, Part{Name: "evaluate/" + e.Name() + "/evaluation.json", Kind: KindFile}, "evaluation "+e.Name(), nil); err != nil {
			return err
		}
	}
	return nil
}

// files copies the regular JSON files directly in dir (not its folders,
// nor a file a write left half-made, whose name begins with a dot), each
// through change when it is given.
func (b *batch) files(dir, under, kind, what string, change transform) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s cannot be listed: %v", dir, unwrapPath(err))
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || !safeName(e.Name()) {
			continue
		}
		if err := b.copy(filepath.Join(dir, e.Name()), Part{Name: under + "/" + e.Name(), Kind: kind}, what, change); err != nil {
			return err
		}
	}
	return nil
}

// transform is what a file named name goes into the archive as, and what
// its progress line calls it.
type transform func(name string, data []byte) ([]byte, string, error)

// copy stages the file src as the part p, through change when it is
// given. A file removed since it was listed is not carried.
func (b *batch) copy(src string, p Part, what string, change transform) error {
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s cannot be read: %v", src, unwrapPath(err))
	}
	if change != nil {
		if data, what, err = change(filepath.Base(src), data); err != nil {
			return err
		}
	}
	return b.stage(p, func(dst string) error { return os.WriteFile(dst, data, 0o600) }, func(Part) string { return what })
}

// writeArchive writes the manifest and then every staged part into a new
// file beside to, and renames it to to once it is whole and on the disk.
func writeArchive(to, staging string, m Manifest, now time.Time) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".partial-")
	if err != nil {
		return 0, fmt.Errorf("cannot write in %s: %v", filepath.Dir(to), unwrapPath(err))
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var out io.Writer = tmp
	var zw *gzip.Writer
	if strings.HasSuffix(to, ".gz") || strings.HasSuffix(to, ".tgz") {
		zw = gzip.NewWriter(tmp)
		out = zw
	}
	tw := tar.NewWriter(out)
	manifest, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return 0, err
	}
	manifest = append(manifest, '\n')
	mod := now.UTC().Truncate(time.Second)
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(manifest)), ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
		return 0, writeFailed(to, err)
	}
	if _, err := tw.Write(manifest); err != nil {
		return 0, writeFailed(to, err)
	}
	for _, p := range m.Parts {
		if err := tw.WriteHeader(&tar.Header{Name: p.Name, Mode: 0o600, Size: p.Size, ModTime: mod, Typeflag: tar.TypeReg}); err != nil {
			return 0, writeFailed(to, err)
		}
		f, err := os.Open(filepath.Join(staging, filepath.FromSlash(p.Name)))
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(tw, f)
		f.Close()
		if err != nil {
			return 0, writeFailed(to, err)
		}
	}
	if err := tw.Close(); err != nil {
		return 0, writeFailed(to, err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return 0, writeFailed(to, err)
		}
	}
	if err := tmp.Sync(); err != nil {
		return 0, writeFailed(to, err)
	}
	fi, err := tmp.Stat()
	if err != nil {
		return 0, writeFailed(to, err)
	}
	if err := tmp.Close(); err != nil {
		return 0, writeFailed(to, err)
	}
	if err := os.Rename(tmp.Name(), to); err != nil {
		return 0, writeFailed(to, err)
	}
	done = true
	syncDir(filepath.Dir(to))
	return fi.Size(), nil
}

func writeFailed(to string, err error) error {
	return fmt.Errorf("the archive %s could not be written: %v", to, unwrapPath(err))
}

// hashFile is the size and the hex SHA-256 of the file at p.
func hashFile(p string) (int64, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// safeName is a file or folder name the archive may carry: no dot first,
// no separator, nothing a shell or a path would read otherwise.
func safeName(name string) bool {
	if name == "" || strings.HasPrefix(name, ".") || len(name) > 200 {
		return false
	}
	for _, c := range name {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return path.Clean(name) == name
}

// shortHead is HEAD as a person reads it: the branch's name, or a short
// commit.
func shortHead(head string) string {
	if b, ok := strings.CutPrefix(head, "refs/heads/"); ok {
		return b
	}
	if len(head) > 12 {
		return head[:12]
	}
	return head
}

// humanSize is n bytes as a person reads it.
func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// syncDir asks the disk to keep a rename in dir; a folder that cannot be
// opened is left to the file system.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// unwrapPath drops the path an *os.PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
