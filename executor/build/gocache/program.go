// Package gocache gives every Go build of an application the standard
// library compiled once, by the host, without letting one application's
// build reach what another builds with.
//
// The go command asks an external cache program for its build cache when
// GOCACHEPROG names one (cmd/go's cacheprog protocol: JSON requests on
// stdin, answers on stdout). This program is that cache program: started
// as `<this program> --autoapp-go-cache <own> [<shared>…]` it answers each
// lookup from the application's own folder first and then from the shared
// folders, and writes everything the build puts only into its own folder.
// The shared folder is filled by the host alone (Shared.Warm, go vet of
// a program importing the whole standard library, with this program
// writing into it) and a confined build sees it
// read-only, so a build can read the trusted standard library but can
// never leave there what another application would then link.
//
// An entry is two files, named like the go command's own cache: the
// action's record <aa>/<action>-a ("v1 <output> <size> <unix nanos>") and
// the output <oo>/<output>-d, each written whole (atomicfile.Replace).
package gocache

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"autoapp/intent/atomicfile"
)

// Flag is the first argument that makes this program the cache program.
const Flag = "--autoapp-go-cache"

// When this program is started as the cache program (see Flag), it serves
// the go command that started it and never returns to its own main. In
// any other run it does nothing.
func init() {
	if len(os.Args) >= 3 && os.Args[1] == Flag {
		os.Exit(program(os.Args[2], os.Args[3:]))
	}
}

func program(own string, shared []string) int {
	c := &store{own: own, shared: shared}
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriter(os.Stdout)
	if err := c.serve(in, out); err != nil {
		fmt.Fprintf(os.Stderr, "autoapp go cache: %v\n", err)
		return 1
	}
	return 0
}

// request and response are cmd/go's cacheprog.Request and Response, the
// fields this program uses.
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// store is one build's view: the folder it writes, and the folders it
// only reads.
type store struct {
	own    string
	shared []string
}

// serve answers requests until the go command says close or ends its
// side.
func (c *store) serve(in io.Reader, w *bufio.Writer) error {
	enc := json.NewEncoder(w)
	answer := func(r response) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := answer(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	dec := json.NewDecoder(in)
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading a request: %w", err)
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			// The body follows as a base64 JSON string, which decoding into
			// a []byte undoes.
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("reading the body of request %d: %w", req.ID, err)
			}
		}
		res := response{ID: req.ID}
		switch req.Command {
		case "get":
			c.get(req, &res)
		case "put":
			c.put(req, body, &res)
		case "close":
			return answer(res)
		default:
			res.Err = fmt.Sprintf("unknown command %q", req.Command)
		}
		if err := answer(res); err != nil {
			return err
		}
	}
}

// get answers from the build's own folder, then from each shared one.
func (c *store) get(req request, res *response) {
	if len(req.ActionID) != sha256.Size {
		res.Err = "an action id is 32 bytes"
		return
	}
	for _, dir := range append([]string{c.own}, c.shared...) {
		if e, ok := lookup(dir, req.ActionID); ok {
			res.OutputID, res.Size, res.DiskPath = e.output, e.size, e.path
			t := e.time
			res.Time = &t
			return
		}
	}
	res.Miss = true
}

// put writes the output and then its action's record, each whole, into
// the build's own folder only.
func (c *store) put(req request, body []byte, res *response) {
	switch {
	case len(req.ActionID) != sha256.Size || len(req.OutputID) != sha256.Size:
		res.Err = "an action id and an output id are 32 bytes"
		return
	case int64(len(body)) != req.BodySize:
		res.Err = fmt.Sprintf("the body is %d bytes, not the %d announced", len(body), req.BodySize)
		return
	}
	sum := sha256.Sum256(body)
	if string(sum[:]) != string(req.OutputID) {
		res.Err = "the body does not hash to its output id"
		return
	}
	out := outputPath(c.own, req.OutputID)
	if info, err := os.Stat(out); err != nil || info.Size() != int64(len(body)) {
		if err := atomicfile.Replace(out, body); err != nil {
			res.Err = err.Error()
			return
		}
	}
	record := fmt.Sprintf("v1 %x %d %d\n", req.OutputID, len(body), time.Now().UnixNano())
	if err := atomicfile.Replace(actionPath(c.own, req.ActionID), []byte(record)); err != nil {
		res.Err = err.Error()
		return
	}
	res.DiskPath = out
}

type entry struct {
	output []byte
	size   int64
	time   time.Time
	path   string
}

// lookup reads an action's record in dir and checks its output is there
// at the size recorded.
func lookup(dir string, action []byte) (entry, bool) {
	b, err := os.ReadFile(actionPath(dir, action))
	if err != nil {
		return entry{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != "v1" {
		return entry{}, false
	}
	output, err := hex.DecodeString(f[1])
	if err != nil || len(output) != sha256.Size {
		return entry{}, false
	}
	size, err1 := strconv.ParseInt(f[2], 10, 64)
	nanos, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return entry{}, false
	}
	path := outputPath(dir, output)
	if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() || info.Size() != size {
		return entry{}, false
	}
	return entry{output: output, size: size, time: time.Unix(0, nanos), path: path}, true
}

func actionPath(dir string, id []byte) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-a")
}

func outputPath(dir string, id []byte) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-d")
}
