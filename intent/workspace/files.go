package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// files is how the host itself reads files in a workspace — git's own
// (HEAD, the branch, the index, loose objects) and the application's
// (the manifest, the acceptance examples) — never through a symbolic
// link, never outside the workspace, and never waiting on a named pipe
// or a device the engineer's code may have put there. Where the kernel
// offers openat2 (Linux 5.6 and later) one call resolves the whole path
// so; otherwise the root looks at every name on the way first.
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

// errThroughLink says a path has a symbolic link on the way or at its end.
var errThroughLink = errors.New("a symbolic link on the way")

// openFlags are how the host opens a file to read: a named pipe opens at
// once rather than wait for a writer, and a terminal never becomes the
// server's.
const openFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY

// open opens name, a path from the workspace's top, for reading without
// waiting, and says what it is. A path with a symbolic link on the way
// answers errThroughLink, a missing one fs.ErrNotExist. The caller checks
// the type before it reads.
func (f files) open(name string) (*os.File, os.FileInfo, error) {
	if f.fd >= 0 && !noOpenat2.Load() {
		fd, err := unix.Openat2(f.fd, name, &unix.OpenHow{
			Flags:   openFlags,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			file := os.NewFile(uintptr(fd), name)
			info, err := file.Stat()
			if err != nil {
				file.Close()
				return nil, nil, err
			}
			return file, info, nil
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
			return nil, nil, errThroughLink
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR):
			return nil, nil, fs.ErrNotExist
		default:
			return nil, nil, f.openProblem(name, err)
		}
	}
	return f.openThroughRoot(name)
}

// openThroughRoot is open without openat2: every name on the way is
// looked at first, and the file opened is checked to be the one looked
// at. The root keeps a link swapped in meanwhile from leading outside.
func (f files) openThroughRoot(name string) (*os.File, os.FileInfo, error) {
	var last os.FileInfo
	if name != "." {
		parts := strings.Split(name, "/")
		for i := range parts {
			info, err := f.root.Lstat(strings.Join(parts[:i+1], "/"))
			switch {
			case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENOTDIR):
				return nil, nil, fs.ErrNotExist
			case err != nil:
				return nil, nil, err
			case info.Mode()&fs.ModeSymlink != 0:
				return nil, nil, errThroughLink
			}
			last = info
		}
	}
	file, err := f.root.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, nil, f.openProblem(name, err)
	}
	info, err := file.Stat()
	if err == nil && last != nil && !os.SameFile(info, last) {
		err = errThroughLink // replaced while it was looked at
	}
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return file, info, nil
}

// openProblem is the error of opening name when it is not simply absent:
// a socket, which cannot be opened, answers what it is.
func (f files) openProblem(name string, err error) error {
	if errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ELOOP) {
		if info, lerr := f.root.Lstat(name); lerr == nil {
			return &kindError{mode: info.Mode()}
		}
	}
	return err
}

// kindError says a file is not of the type asked for.
type kindError struct{ mode fs.FileMode }

func (e *kindError) Error() string { return "is " + kindOf(e.mode) }

// kindOf names what a file of mode is, for a sentence.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a file"
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// readFile reads the regular file name whole when it holds at most max
// bytes; a *ReadError says why not.
func (f files) readFile(name string, max int64) ([]byte, error) {
	file, info, err := f.open(name)
	if err != nil {
		return nil, readError(name, err)
	}
	defer file.Close()
	switch {
	case !info.Mode().IsRegular():
		return nil, readError(name, &kindError{mode: info.Mode()})
	case info.Size() > max:
		return nil, &ReadError{Path: name, Reason: fmt.Sprintf("is %s, and the host reads at most %s of a file", sizeText(info.Size()), limitText(max))}
	}
	b, err := io.ReadAll(io.LimitReader(file, max+1))
	if err != nil {
		return nil, fmt.Errorf("workspace: read %s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, &ReadError{Path: name, Reason: fmt.Sprintf("grew past %s while the host read it", limitText(max))}
	}
	return b, nil
}

// read is readFile for git's own files, where anything unexpected is
// git's to read: false when name is not a regular file of at most max
// bytes.
func (f files) read(name string, max int64) ([]byte, bool) {
	b, err := f.readFile(name, max)
	return b, err == nil
}

// limitText is a limit as the person is told it: "8 MiB", "64 KiB".
func limitText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
