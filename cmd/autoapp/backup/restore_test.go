package backup_test

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"autoapp/cmd/autoapp/backup"
)

// entry is one entry of an archive a test makes by hand.
type entry struct {
	name string
	data string
	kind byte // tar's type flag; 0 is a regular file
}

// archiveOf writes a plain tar of the manifest m and the entries.
func archiveOf(t *testing.T, m backup.Manifest, entries ...entry) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	raw, _ := json.Marshal(m)
	all := append([]entry{{name: backup.ManifestName, data: string(raw)}}, entries...)
	for _, e := range all {
		h := &tar.Header{Name: e.name, Mode: 0o600, Size: int64(len(e.data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}
		if e.kind != 0 {
			h.Typeflag, h.Size, h.Linkname = e.kind, 0, "/etc/passwd"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.kind == 0 {
			tw.Write([]byte(e.data))
		}
	}
	tw.Close()
	path := filepath.Join(t.TempDir(), "a.tar")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func part(name, kind, data string) backup.Part {
	sum := sha256.Sum256([]byte(data))
	return backup.Part{Name: name, Kind: kind, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

// TestRestoreWritesNothingAnArchiveNamesOutsideItsPlaces: an archive is
// another machine's word; a part named out of the data folder's places,
// an entry that is a link, one its manifest does not name, or a
// repository under another application's name, is refused before
// anything is restored, and nothing appears where it pointed.
func TestRestoreWritesNothingAnArchiveNamesOutsideItsPlaces(t *testing.T) {
	stores := []backup.Part{part("launcher/intents.sqlite", backup.KindStore, "x"), part("launcher/knowledge.sqlite", backup.KindStore, "y")}
	base := backup.Manifest{Format: backup.Format, LauncherVersion: "test", Stores: map[string]backup.StoreVersion{"intents": {Version: 1}, "knowledge": {Version: 1}}}
	with := func(parts ...backup.Part) backup.Manifest {
		m := base
		m.Parts = append(append([]backup.Part{}, stores...), parts...)
		return m
	}
	storeEntries := []entry{{name: "launcher/intents.sqlite", data: "x"}, {name: "launcher/knowledge.sqlite", data: "y"}}
	elsewhere := part("apps/notes/workspace.bundle", backup.KindRepository, "b")
	elsewhere.App, elsewhere.Head = "shop", "refs/heads/main"
	for _, tc := range []struct {
		name    string
		m       backup.Manifest
		entries []entry
		want    string
	}{
		{"a part out of the folder", with(part("launcher/../../escape.json", backup.KindSettings, "{}")),
			append(storeEntries, entry{name: "launcher/../../escape.json", data: "{}"}), "which no backup writes"},
		{"an absolute part", with(part("/tmp/escape.json", backup.KindFile, "{}")),
			append(storeEntries, entry{name: "/tmp/escape.json", data: "{}"}), "which no backup writes"},
		{"a settings file that is not JSON", with(part("launcher/serve.lock", backup.KindSettings, "1")),
			append(storeEntries, entry{name: "launcher/serve.lock", data: "1"}), "which no backup writes"},
		{"a repository of another application", with(elsewhere),
			append(storeEntries, entry{name: elsewhere.Name, data: "b"}), "which no backup writes"},
		{"a link", with(part("launcher/prices.json", backup.KindSettings, "{}")),
			append(storeEntries, entry{name: "launcher/prices.json", kind: tar.TypeSymlink}), "which its manifest does not name"},
		{"an entry the manifest does not name", with(),
			append(storeEntries, entry{name: "launcher/prices.json", data: "{}"}), "which its manifest does not name"},
		{"no store", func() backup.Manifest { m := base; m.Parts = stores[:1]; return m }(), storeEntries[:1], "it holds no knowledge store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "deep", "restored")
			_, err := backup.Restore(t.Context(), archiveOf(t, tc.m, tc.entries...), root, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Restore = %v; want a refusal saying %q", err, tc.want)
			}
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Errorf("the refused restore made %s", root)
			}
			for _, p := range []string{filepath.Join(dir, "escape.json"), filepath.Join(dir, "deep", "escape.json"), "/tmp/escape.json"} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("the refused restore wrote %s", p)
				}
			}
		})
	}
}
