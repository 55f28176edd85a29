package build

import (
	"fmt"
	"os"
	"path/filepath"
)

// inherited are the host variables a build may see: where Go keeps its
// caches and modules (the host go's defaults when unset), its flags, and
// whether cgo is on. Nothing else of the host's environment passes, so no key or
// token the host holds reaches the application's code.
var inherited = []string{"GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "CGO_ENABLED"}

// defaultPath is PATH when the host has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// Environ is the whole environment a build stage or a preview of the
// workspace dir runs with: PATH, HOME, TMPDIR, LANG=C.UTF-8 and the Go
// variables the host has. HOME is the folder .home beside the workspace,
// kept between builds so tools can keep their caches there, or a temporary
// folder when that cannot be made. TMPDIR is a fresh temporary folder;
// cleanup removes it and any temporary HOME.
func Environ(dir string) (env []string, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "autoapp-tmp-")
	if err != nil {
		return nil, nil, fmt.Errorf("build: environment: %w", err)
	}
	remove := []string{tmp}
	cleanup = func() {
		for _, d := range remove {
			_ = os.RemoveAll(d)
		}
	}

	home, err := homeFor(dir)
	if err != nil {
		if home, err = os.MkdirTemp("", "autoapp-home-"); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("build: environment: %w", err)
		}
		remove = append(remove, home)
	}

	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	env = []string{
		"PATH=" + path,
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
	}
	for _, name := range inherited {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		} else if v := goDefault(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env, cleanup, nil
}

// homeFor makes the folder .home beside the workspace.
func homeFor(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	home := filepath.Join(filepath.Dir(abs), ".home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	return home, nil
}

// goDefault is where the host's go keeps its build cache and modules when
// no variable says otherwise. A build's HOME is not the host's, so without
// these every application would compile the standard library afresh and
// could not find modules the machine already has.
func goDefault(name string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = filepath.Join(home, "go")
	}
	switch name {
	case "GOCACHE":
		if dir, err := os.UserCacheDir(); err == nil {
			return filepath.Join(dir, "go-build")
		}
	case "GOPATH":
		return gopath
	case "GOMODCACHE":
		return filepath.Join(gopath, "pkg", "mod")
	}
	return ""
}
