package sandbox

import (
	"fmt"
	"time"
)

// Limits bound what one confined process and everything it starts may
// use. The sandbox sets them as resource limits inside its own user
// namespace and watches the whole process tree: a tree that passes the
// processes or memory limit is killed at once, and the host says which
// limit ended it (LimitError). Zero leaves a limit unset.
type Limits struct {
	// Processes is how many processes may run at once; the tree is
	// stopped when it has more.
	Processes int `json:"processes"`
	// Memory is the memory the processes may hold together, in bytes.
	Memory int64 `json:"memory"`
	// CPU is the CPU time each process may use.
	CPU time.Duration `json:"cpu"`
	// FileSize is the largest file a process may write, in bytes.
	FileSize int64 `json:"fileSize"`
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// BuildLimits are a build stage's.
var BuildLimits = Limits{Processes: 256, Memory: 2 * gib, CPU: 10 * time.Minute, FileSize: gib}

// PreviewLimits are a preview's: it runs until stopped, so no CPU time.
var PreviewLimits = Limits{Processes: 256, Memory: 2 * gib, FileSize: gib}

// Lines says each limit in words, for Settings.
func (l Limits) Lines() []string {
	var out []string
	if l.Processes > 0 {
		out = append(out, fmt.Sprintf("%d processes at once", l.Processes))
	}
	if l.Memory > 0 {
		out = append(out, Bytes(l.Memory)+" of memory in all")
	}
	if l.CPU > 0 {
		out = append(out, minutes(l.CPU)+" of CPU time a process")
	}
	if l.FileSize > 0 {
		out = append(out, "files of at most "+Bytes(l.FileSize))
	}
	return out
}

// Bytes writes n the way the pages do: 2 GiB, 512 MiB, 64 KiB.
func Bytes(n int64) string {
	switch {
	case n >= gib && n%gib == 0:
		return fmt.Sprintf("%d GiB", n/gib)
	case n >= mib && n%mib == 0:
		return fmt.Sprintf("%d MiB", n/mib)
	case n >= kib && n%kib == 0:
		return fmt.Sprintf("%d KiB", n/kib)
	}
	return fmt.Sprintf("%d bytes", n)
}

// The limits a confined process can pass, as the sandbox reports them.
const (
	LimitProcesses = "processes"
	LimitMemory    = "memory"
	LimitCPU       = "cpu"
	LimitFileSize  = "filesize"
)

// LimitError says a limit ended a confined process.
type LimitError struct {
	// Limit is which: one of the Limit… names.
	Limit  string
	Limits Limits
}

func (e *LimitError) Error() string { return "sandbox: " + e.Sentence("the process") }

// Sentence says what happened to what ("The build stage", "The
// preview"): "The build stage used more than 2 GiB of memory and was
// stopped."
func (e *LimitError) Sentence(what string) string {
	switch e.Limit {
	case LimitProcesses:
		return fmt.Sprintf("%s started more than %d processes and was stopped.", capital(what), e.Limits.Processes)
	case LimitMemory:
		return fmt.Sprintf("%s used more than %s of memory and was stopped.", capital(what), Bytes(e.Limits.Memory))
	case LimitCPU:
		return fmt.Sprintf("%s used more than %s of CPU time and was stopped.", capital(what), minutes(e.Limits.CPU))
	case LimitFileSize:
		return fmt.Sprintf("%s wrote a file larger than %s and was stopped.", capital(what), Bytes(e.Limits.FileSize))
	}
	return fmt.Sprintf("%s passed a limit (%s) and was stopped.", capital(what), e.Limit)
}

// minutes writes d as "10 minutes", or in seconds when shorter.
func minutes(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "1 minute"
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return fmt.Sprintf("%d seconds", d/time.Second)
}

func capital(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
