package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"autoapp/cmd/autoapp/backup"
	"autoapp/cmd/autoapp/launcher"
	"autoapp/intent/refusal"
)

// backupCmd writes the data folder into one archive, while a server may
// go on serving it; the progress, a line a part, and whether the API keys
// went in are said on stderr, what was written on stdout.
func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "./data", "the data folder")
	to := fs.String("to", "", "the archive to write, a new file (gzipped when it ends in .gz or .tgz)")
	withKeys := fs.Bool("with-keys", false, "put the providers' API keys in the archive")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *to == "" {
		fmt.Fprint(stderr, "autoapp backup: give --to, the archive to write.\n")
		return 2
	}
	if err := requireData(*root); err != nil {
		fmt.Fprintf(stderr, "autoapp backup: %v\n", err)
		return 1
	}
	w, err := backup.Write(ctx, *root, *to, backup.Options{WithKeys: *withKeys, Version: launcher.Version, Now: clock, Progress: stderr})
	if err != nil {
		return failed(stderr, "backup", err)
	}
	switch {
	case w.Keys > 0 && w.Manifest.WithKeys:
		fmt.Fprintf(stderr, "The archive holds the providers' API keys (%d): keep it as safe as the keys themselves.\n", w.Keys)
	case w.Keys > 0:
		fmt.Fprintf(stderr, "API keys are not in the archive (%d left out); pass --with-keys to include them, or give them again in Settings after a restore.\n", w.Keys)
	default:
		fmt.Fprint(stderr, "No provider has an API key, so the archive holds none.\n")
	}
	fmt.Fprintf(stdout, "Backed up %s into %s: %d parts, %d bytes.\n", *root, *to, len(w.Manifest.Parts), w.Size)
	return 0
}

// restoreCmd makes a new data folder of an archive backup wrote.
func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the archive `autoapp backup` wrote")
	root := fs.String("root", "", "the data folder to make: a new or an empty folder")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *from == "" || *root == "" {
		fmt.Fprint(stderr, "autoapp restore: give --from, the archive, and --root, a new or an empty folder to restore it into.\n")
		return 2
	}
	r, err := backup.Restore(ctx, *from, *root, stderr)
	if err != nil {
		return failed(stderr, "restore", err)
	}
	m := r.Manifest
	keys := "without the API keys: give them again in Settings"
	if m.WithKeys {
		keys = "with the API keys"
	}
	fmt.Fprintf(stdout, "Restored %s into %s (launcher %s, %s, intents store at migration %d, knowledge store at migration %d), %s. Start it with: autoapp serve --root %s\n",
		*from, r.Root, m.LauncherVersion, m.CreatedAt.Format("2006-01-02 15:04 MST"), m.Stores["intents"].Version, m.Stores["knowledge"].Version, keys, r.Root)
	return 0
}

// parseFlags parses args, none of which may be left over. ok is false when
// the command ends here, with the exit code; the flag package said why.
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return 0, false
	} else if err != nil {
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "autoapp %s: unexpected argument %q.\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}

// failed says err in one sentence and answers the exit code: 2 for a
// refusal of what the person gave, 1 for anything else.
func failed(stderr io.Writer, verb string, err error) int {
	fmt.Fprintf(stderr, "autoapp %s: %v\n", verb, err)
	if _, ok := errors.AsType[*refusal.Error](err); ok {
		return 2
	}
	return 1
}
