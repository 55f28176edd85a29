package handlers_test

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs four tests a core at once rather than go test's one: the
// handler tests spend most of their time waiting, on a build stage that
// sleeps, a preview's start timeout, git and the sandbox's processes, not
// computing, and each has a root of its own. A -parallel given to go test
// is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	m.Run()
}
