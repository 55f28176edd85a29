package preview

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"autoapp/intent/refusal"
)

// startStatic serves the workspace's folder from the host itself, on a
// listener of its own so the site has its own origin. The folder is opened
// as an os.Root: no request reaches outside it, through .. or a symlink.
func (m *Manager) startStatic(appID, dir, folder, release string) (*running, error) {
	local := filepath.FromSlash(path.Clean(folder))
	if !filepath.IsLocal(local) {
		return nil, refuse(refusal.Invalid, "The static folder %s must be inside the workspace.", folder)
	}
	ws, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("preview: static: %w", err)
	}
	defer ws.Close()
	folderFS, err := ws.OpenRoot(local)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, refuse(refusal.Invalid, "There is no folder %s in the workspace to serve.", folder)
	}
	if err != nil {
		return nil, refuse(refusal.Invalid, "The static folder %s cannot be served: it is not a folder inside the workspace.", folder)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		folderFS.Close()
		return nil, fmt.Errorf("preview: static: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	srv := &http.Server{
		Handler:           site(appID, port, siteHandler(regularFiles{folderFS})),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelDebug),
	}
	ended := make(chan struct{})
	go func() {
		_ = srv.Serve(ln)
		folderFS.Close()
		close(ended)
	}()

	info := Info{
		AppID:     appID,
		Release:   release,
		SpawnedAt: m.now(),
		URL:       Link(appID, port),
		Link:      Link(appID, port),
		Port:      port,
		Static:    true,
	}
	stop := func() {
		_ = srv.Close()
		<-ended
	}
	return &running{info: info, output: func() string { return "" }, ended: ended, stop: stop}, nil
}

// siteHandler serves files read-only, refuses paths with .. outright and
// hides dotfiles (.git, .env) from requests and listings alike.
func siteHandler(site fs.FS) http.Handler {
	files := http.FileServerFS(dotless{site})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "A static preview only answers GET and HEAD.", http.StatusMethodNotAllowed)
			return
		}
		if slices.Contains(strings.FieldsFunc(r.URL.Path, isSlash), "..") {
			http.Error(w, "Paths with .. are refused.", http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store") // each release replaces the last
		files.ServeHTTP(w, r)
	})
}

func isSlash(r rune) bool { return r == '/' || r == '\\' }

// regularFiles is the static folder as a file system of regular files and
// folders: each is opened through the root (a link stays inside the
// folder) without waiting, and anything else — a named pipe, a device, a
// socket the engineer's code put there — is refused by its type before a
// byte is read, rather than waited on or streamed for ever.
type regularFiles struct{ root *os.Root }

func (r regularFiles) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() && !info.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f, nil
}

// dotless is a file system without its dotfiles.
type dotless struct{ fs fs.FS }

func (d dotless) Open(name string) (fs.File, error) {
	if name != "." && slices.ContainsFunc(strings.Split(name, "/"), isDotName) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f, err := d.fs.Open(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Chiefly a symlink out of the folder, which os.Root refuses; it
		// reads as 403 rather than a server error.
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		if dir, ok := f.(fs.ReadDirFile); ok {
			return dotlessDir{dir}, nil
		}
	}
	return f, nil
}

func isDotName(s string) bool { return strings.HasPrefix(s, ".") }

// dotlessDir lists a folder without its dotfiles.
type dotlessDir struct{ fs.ReadDirFile }

func (d dotlessDir) ReadDir(n int) ([]fs.DirEntry, error) {
	for {
		entries, err := d.ReadDirFile.ReadDir(n)
		entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return isDotName(e.Name()) })
		// A batch of only dotfiles must not read as the end of the folder.
		if len(entries) > 0 || err != nil || n <= 0 {
			return entries, err
		}
	}
}
