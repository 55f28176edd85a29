package workspace

import (
	"errors"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// files is how the host reads git's own files in a workspace: through its
// root, or, where the kernel offers openat2 (Linux 5.6 and later), in one
// call that refuses any link on the way and anything outside the
// workspace. A turn reads HEAD, its branch and a commit a few times; with
// a root each read walks every folder on the way, one system call each.
type files struct {
	root *os.Root
	fd   int // the workspace folder (O_PATH), -1 when there is none
}

// noOpenat2 is set once the kernel said it has no openat2.
var noOpenat2 atomic.Bool

// openFiles is the files of the workspace folder real, read through root.
func openFiles(real string, root *os.Root) files {
	f := files{root: root, fd: -1}
	if noOpenat2.Load() {
		return f
	}
	if fd, err := unix.Open(real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		f.fd = fd
	}
	return f
}

func (f files) close() {
	if f.fd >= 0 {
		unix.Close(f.fd)
	}
}

// read reads the regular file name whole, not through a symbolic link,
// when it holds at most max bytes: opened with one openat2 where the
// kernel has it, else through the root.
func (f files) read(name string, max int64) ([]byte, bool) {
	if f.fd >= 0 && !noOpenat2.Load() {
		fd, err := unix.Openat2(f.fd, name, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			file := os.NewFile(uintptr(fd), name)
			defer file.Close()
			return readRegular(file, max)
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
		default:
			return nil, false // absent, a link on the way, outside: not for the host to read
		}
	}
	file, err := f.root.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, false
	}
	defer file.Close()
	return readRegular(file, max)
}

// readRegular reads file whole when it is a regular file of at most max
// bytes.
func readRegular(file *os.File, max int64) ([]byte, bool) {
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() > max {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(file, max+1))
	if err != nil || int64(len(b)) > max {
		return nil, false
	}
	return b, true
}
