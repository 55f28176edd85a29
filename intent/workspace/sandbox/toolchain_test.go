package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"autoapp/intent/workspace/sandbox"
)

// TestAToolchainInTheHomeFolderIsReadAndNothingElseOfIt installs a node
// under a temporary home as nvm does, with a secret beside it, and runs,
// in a process of its own with that home and PATH (the toolchains are
// found once a process), a confined stage that runs node: it is found, its
// install root is read, and the secret beside it is not.
func TestAToolchainInTheHomeFolderIsReadAndNothingElseOfIt(t *testing.T) {
	if os.Getenv("AUTOAPP_TOOLCHAIN_CHILD") == "1" {
		toolchainChild(t)
		return
	}
	home := t.TempDir()
	root := filepath.Join(home, ".nvm", "versions", "node", "v20.11.0")
	node := filepath.Join(root, "bin", "node")
	files := map[string]string{
		node: "#!/bin/sh\nif [ \"$1\" = -p ]; then echo " + node + "; echo v20.11.0; exit 0; fi\ncat " + filepath.Join(root, "lib", "node", "runtime.txt") + "\n",
		filepath.Join(root, "lib", "node", "runtime.txt"): "the runtime is here\n",
		filepath.Join(home, "secret.txt"):                 "key-5f2a\n",
		filepath.Join(home, ".nvm", "alias", "default"):   "v20\n",
	}
	for f, text := range files {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAToolchainInTheHomeFolderIsReadAndNothingElseOfIt$", "-test.v")
	cmd.Env = append(os.Environ(), "AUTOAPP_TOOLCHAIN_CHILD=1", "HOME="+home, "PATH="+filepath.Dir(node)+":/usr/local/bin:/usr/bin:/bin",
		"AUTOAPP_TEST_ROOT="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child failed: %v\n%s", err, out)
	}
}

func toolchainChild(t *testing.T) {
	m := machine(t)
	root, home := os.Getenv("AUTOAPP_TEST_ROOT"), os.Getenv("HOME")
	var node *sandbox.Toolchain
	for _, tc := range sandbox.Toolchains() {
		if tc.Program == "node" {
			node = &tc
		}
	}
	if node == nil || node.Version != "Node v20.11.0" || !slices.Equal(node.Roots, []string{root}) {
		t.Fatalf("node as found: %+v, want its root %s", node, root)
	}
	r := newRoot(t)
	cmd := exec.Command("/bin/sh", "-c", "node; if cat "+filepath.Join(home, "secret.txt")+" >/dev/null 2>&1; then echo secret: read; else echo secret: refused; fi; "+
		"if ls "+filepath.Join(home, ".nvm", "alias")+" >/dev/null 2>&1; then echo nvm aliases: read; else echo nvm aliases: refused; fi; "+
		"if echo x > "+filepath.Join(root, "pwned")+" 2>/dev/null; then echo root: written; else echo root: not written; fi")
	cmd.Dir = r.ws
	cmd.Env = []string{"PATH=" + sandbox.ToolchainPath(os.Getenv("PATH")), "HOME=" + home}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	proc, err := sandbox.Start(cmd, m, sandbox.ForApp(r.ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Wait(); err != nil {
		t.Fatalf("the stage failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{"the runtime is here", "secret: refused", "nvm aliases: refused", "root: not written"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the confined stage printed %q, want %q", out.String(), want)
		}
	}
}
