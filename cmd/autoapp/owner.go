package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"autoapp/intent/owner"
	"autoapp/intent/refusal"
)

// ownerSet creates the owner, or replaces the owner's password (and name,
// when given), from the terminal. It ends every session. The password is
// read without echo from a terminal, or as two lines from a pipe.
func ownerSet(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("owner set", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "./data", "the data folder")
	name := fs.String("name", "", "the owner's name (kept when omitted and an owner exists)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // the usage was asked for, and printed
		}
		return 2
	}
	st, err := open(*root)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp owner set: %v\n", err)
		return 1
	}
	defer st.Close()
	in := newPrompter(stdin, stderr)
	if *name == "" {
		var code int
		if *name, code = ownerName(ctx, st.Owners, in, stderr); code != 0 {
			return code
		}
	}
	created, err := setPassword(ctx, st.Owners, in, *name)
	if err != nil {
		return ownerRefused(err, stderr)
	}
	if created {
		fmt.Fprintf(stdout, "Created the owner %q. Sign in at the server's address.\n", strings.TrimSpace(*name))
	} else {
		fmt.Fprintf(stdout, "Set the password of %q; every session was signed out.\n", strings.TrimSpace(*name))
	}
	return 0
}

// ownerName is the name of the owner whose password is set when --name was
// not given: the owner's own, or, with no owner yet, one asked for at a
// terminal. A non-zero code ends owner set.
func ownerName(ctx context.Context, svc *owner.Service, in *prompter, stderr io.Writer) (string, int) {
	o, err := svc.Get(ctx)
	var oe *refusal.Error
	switch {
	case err == nil:
		return o.Name, 0
	case !errors.As(err, &oe) || oe.Code != refusal.NotFound:
		fmt.Fprintf(stderr, "autoapp owner set: %v\n", err)
		return "", 1
	}
	name := ""
	if in.tty {
		name, err = in.line("Owner's name: ")
	}
	if !in.tty || err != nil {
		fmt.Fprintf(stderr, "autoapp owner set: no owner exists yet, so give a name with --name.\n")
		return "", 2
	}
	return name, 0
}

// setPassword reads the new password twice and sets it for name, creating
// the owner when there is none.
func setPassword(ctx context.Context, svc *owner.Service, in *prompter, name string) (created bool, err error) {
	password, err := in.secret("New password: ")
	if err != nil {
		return false, err
	}
	again, err := in.secret("The same password again: ")
	if err != nil {
		return false, err
	}
	return svc.Set(ctx, name, password, again)
}

// ownerRefused says why the password was not set and returns the exit
// code: 2 for a refusal or a password not given, 1 for a failure.
func ownerRefused(err error, stderr io.Writer) int {
	var oe *refusal.Error
	if errors.As(err, &oe) {
		fmt.Fprintf(stderr, "autoapp owner set: %s\n", oe.Message)
		return 2
	}
	if errors.Is(err, io.EOF) {
		fmt.Fprintln(stderr, "autoapp owner set: the password was not given; type it twice, or pipe it in as two lines.")
		return 2
	}
	fmt.Fprintf(stderr, "autoapp owner set: %v\n", err)
	return 1
}

// prompter reads answers from a terminal (without echo for secrets) or from
// lines of a pipe.
type prompter struct {
	fd     int
	tty    bool
	reader *bufio.Reader
	out    io.Writer
}

func newPrompter(stdin io.Reader, out io.Writer) *prompter {
	p := &prompter{reader: bufio.NewReader(stdin), out: out}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.fd, p.tty = int(f.Fd()), true
	}
	return p
}

func (p *prompter) line(prompt string) (string, error) {
	if p.tty {
		fmt.Fprint(p.out, prompt)
	}
	s, err := p.reader.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && s != "") {
		return "", io.EOF
	}
	return strings.TrimRight(s, "\r\n"), nil
}

func (p *prompter) secret(prompt string) (string, error) {
	if !p.tty {
		return p.line(prompt)
	}
	fmt.Fprint(p.out, prompt)
	b, err := term.ReadPassword(p.fd)
	fmt.Fprintln(p.out)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
