package build

import (
	"fmt"
	"os"
	"path/filepath"

	"autoapp/intent/workspace/sandbox"
)

// inherited are the host variables a build may see: how Go fetches
// modules and which flags and cgo setting it uses. Nothing else of the
// host's environment passes, so no key or token the host holds reaches the
// application's code; Go's caches are the application's own (below).
var inherited = []string{"GOFLAGS", "CGO_ENABLED", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY"}

// defaultPath is PATH when the host has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// Environ is the whole environment a build stage or a preview of the
// workspace ws runs with, every folder in it the application's own (see
// sandbox.LayoutOf): PATH, HOME (<app>/.home, kept between builds), TMPDIR
// (a fresh folder in <app>/tmp that cleanup removes), LANG=C.UTF-8, and
// the caches in <app>/cache: Go's build cache and modules, npm's, and
// XDG_CACHE_HOME for the rest. The host's own caches are never shared: one
// application could leave there what another then builds with.
// GOTOOLCHAIN=local keeps go from fetching another toolchain into them.
func Environ(ws string) (env []string, cleanup func(), err error) {
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, nil, fmt.Errorf("build: environment: %w", err)
	}
	l := sandbox.LayoutOf(abs)
	if err := l.Make(); err != nil {
		return nil, nil, fmt.Errorf("build: environment: %w", err)
	}
	tmp, err := os.MkdirTemp(l.Tmp, "run-")
	if err != nil {
		return nil, nil, fmt.Errorf("build: environment: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }

	return environ(l, tmp), cleanup, nil
}

// environ is the environment of a build whose folders are those of l,
// with tmp its TMPDIR.
func environ(l sandbox.Layout, tmp string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	gopath := filepath.Join(l.Cache, "go")
	env := []string{
		// The owner's toolchains first where a shim hides them (pyenv,
		// asdf): the sandbox reads their install roots.
		"PATH=" + sandbox.ToolchainPath(path),
		"HOME=" + l.Home,
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
		"XDG_CACHE_HOME=" + l.Cache,
		"GOCACHE=" + filepath.Join(l.Cache, "go-build"),
		"GOPATH=" + gopath,
		"GOMODCACHE=" + filepath.Join(gopath, "pkg", "mod"),
		"GOTOOLCHAIN=local",
		"npm_config_cache=" + filepath.Join(l.Cache, "npm"),
	}
	for _, name := range inherited {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// hostEnviron is the environment the host builds the shared standard
// library with (gocache.Shared.Warm): a build's, every folder in scratch,
// the host's own, so that nothing of an application's (a go settings file
// in its HOME, say) reaches a process the host runs unconfined, and so
// that the standard library it builds is the one a build asks for.
func hostEnviron(scratch string) []string {
	l := sandbox.Layout{Home: filepath.Join(scratch, "home"), Tmp: filepath.Join(scratch, "tmp"), Cache: filepath.Join(scratch, "cache")}
	_ = l.Make()
	return environ(l, l.Tmp)
}
