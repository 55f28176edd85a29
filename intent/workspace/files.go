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

// open opens the regular file name, not through a symbolic link.
func (f files) open(name string) (*os.File, bool) {
	if f.fd >= 0 && !noOpenat2.Load() {
		fd, err := unix.Openat2(f.fd, name, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			var st unix.Stat_t
			if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				unix.Close(fd)
				return nil, false
			}
			return os.NewFile(uintptr(fd), name), true
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
	if info, err := file.Stat(); err != nil || !info.Mode().IsRegular() {
		file.Close()
		return nil, false
	}
	return file, true
}

// read reads the regular file name whole, when it holds at most max
// bytes: with openat2, four system calls and no os.File.
func (f files) read(name string, max int64) ([]byte, bool) {
	if f.fd >= 0 && !noOpenat2.Load() {
		fd, err := unix.Openat2(f.fd, name, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			defer unix.Close(fd)
			var st unix.Stat_t
			if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > max {
				return nil, false
			}
			b := make([]byte, st.Size+1) // one more, to see the end
			n := 0
			for n < len(b) {
				m, err := unix.Read(fd, b[n:])
				if errors.Is(err, unix.EINTR) {
					continue
				}
				if err != nil {
					return nil, false
				}
				if m == 0 {
					break
				}
				n += m
			}
			if int64(n) > max {
				return nil, false
			}
			return b[:n], true
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
		default:
			return nil, false
		}
	}
	file, ok := f.open(name)
	if !ok {
		return nil, false
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, max+1))
	if err != nil || int64(len(b)) > max {
		return nil, false
	}
	return b, true
}
