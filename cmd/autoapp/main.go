// Command autoapp is the launcher: `autoapp serve` runs the web server,
// `autoapp owner set` creates or resets the owner from the terminal,
// `autoapp intent list|show` prints the backlog, `autoapp knowledge` reviews
// the lessons, `autoapp intervention` queues feedback or a pause for a
// running intent, `autoapp backup` writes the data folder into one archive
// and `autoapp restore` makes a new data folder of one, `autoapp mcp`
// offers the launcher to editors and agents over the Model Context
// Protocol, and `autoapp version` prints the version.
package main

import (
	"autoapp/cmd/autoapp/launcher"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `Usage:
  autoapp serve [--root DIR] [--addr HOST:PORT] [--allow-remote[=NAME,…]]
  autoapp owner set [--root DIR] [--name NAME]
  autoapp intent list [--root DIR] [--app ID] [--json]
  autoapp intent show N [--root DIR] [--json]
  autoapp knowledge list [--root DIR] [--provisional|--confirmed|--review|--method] [--json]
  autoapp knowledge show ID [--root DIR] [--json]
  autoapp knowledge replay CASE [--root DIR] [--with LESSON] [--runs N] [--json]
  autoapp knowledge evaluate [--root DIR] [--runs N] [--out PATH] [--json]
  autoapp knowledge confirm ID [--root DIR] [--by NAME] [--yes]
  autoapp knowledge retire ID [--root DIR]
  autoapp knowledge export [--root DIR] [--json]
  autoapp intervention submit --intent N --request-id ID --kind feedback|pause [--text T] [--root DIR] [--json]
  autoapp intervention inspect --intent N [--root DIR] [--json]
  autoapp backup --to FILE [--root DIR] [--with-keys]
  autoapp restore --from FILE --root NEWDIR
  autoapp mcp [--root DIR] [--allow-run]
  autoapp version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program, callable from tests. It returns the exit code:
// 0 done, 1 a failure, 2 a usage mistake.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "owner":
		if len(args) < 2 || args[1] != "set" {
			fmt.Fprint(stderr, "autoapp owner: the only subcommand is `owner set`.\n"+usage)
			return 2
		}
		return ownerSet(ctx, args[2:], stdin, stdout, stderr)
	case "intent":
		return intentCmd(ctx, args[1:], stdout, stderr)
	case "knowledge":
		return knowledgeCmd(ctx, args[1:], stdin, stdout, stderr)
	case "intervention":
		return interventionCmd(ctx, args[1:], stdout, stderr)
	case "backup":
		return backupCmd(ctx, args[1:], stdout, stderr)
	case "restore":
		return restoreCmd(ctx, args[1:], stdout, stderr)
	case "mcp":
		return mcpCmd(ctx, args[1:], stdin, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "autoapp %s\n", launcher.Version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "autoapp: %q is not a subcommand.\n%s", args[0], usage)
	return 2
}
