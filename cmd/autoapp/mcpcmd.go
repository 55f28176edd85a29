package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"autoapp/cmd/autoapp/launcher"
	"autoapp/handlers/control"
	"autoapp/handlers/mcpserver"
	"autoapp/intent"
	"autoapp/intent/app"
	"autoapp/intent/delivery"
	"autoapp/intent/refusal"
	"autoapp/intent/request"
	"autoapp/intent/workspace"
	"autoapp/knowledge"
	"autoapp/migrations"
)

// mcpCmd serves the Model Context Protocol on stdin and stdout until the
// client goes or ctx ends. It reads the stores as they are, beside a
// running server and never in its way (read-only, no migration); the
// owner's writes any process may make (a receipt, an answer, an approval)
// open the store for writing on the first one; a chat turn and a run are
// asked of the running server through its control socket.
func mcpCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "./data", "the data folder")
	allowRun := fs.Bool("allow-run", false, "also offer approve_plan and run_intent: the client may approve plans and start runs")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "autoapp mcp: unexpected argument %q; every value goes with its flag.\n", fs.Arg(0))
		return 2
	}
	abs, err := filepath.Abs(*root)
	if err == nil {
		err = requireData(abs)
	}
	if err != nil {
		fmt.Fprintf(stderr, "autoapp mcp: %v\n", err)
		return 1
	}
	st, err := openForMCP(abs)
	if err != nil {
		fmt.Fprintf(stderr, "autoapp mcp: %v\n", err)
		return 1
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	server := mcpserver.New(mcpserver.Deps{Apps: st.apps, Backlog: st.backlog, Requests: st.requests, Deliveries: st.deliveries, Log: st.knowledge,
		Inbox: st.writes, Answers: st.writes, Approvals: st.writes,
		Server:   &control.Client{Root: abs, Serving: knowledge.ServerRunning},
		Failures: log, Version: launcher.Version}, mcpserver.Options{AllowRun: *allowRun})
	err = server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && ctx.Err() == nil && !errors.Is(err, mcp.ErrConnectionClosed) && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "autoapp mcp: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpStores are the stores `autoapp mcp` reads, and the one it writes.
type mcpStores struct {
	intents    *migrations.DB
	knowledge  *knowledge.Store
	apps       *app.Service
	backlog    *intent.Service
	requests   *request.Service
	deliveries *delivery.Service
	writes     *ownerWrites
}

// openForMCP opens root's stores for reading as they are, as the
// read-only commands do: nothing is created or migrated.
func openForMCP(root string) (*mcpStores, error) {
	dir := filepath.Join(root, "launcher")
	db, err := migrations.OpenReadOnly(filepath.Join(dir, "intents.sqlite"))
	if err != nil {
		return nil, fmt.Errorf("the intents store could not be opened: %v", err)
	}
	ks, err := knowledge.OpenReadOnly(filepath.Join(dir, "knowledge.sqlite"), clock)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("the knowledge store could not be opened: %v", err)
	}
	backlog := intent.NewService(db, root, clock, intent.Collaborators{Journal: request.Journal{}})
	return &mcpStores{intents: db, knowledge: ks, backlog: backlog,
		apps:     app.NewService(db, root, clock, workspace.Repositories{Now: clock}),
		requests: request.NewService(db, backlog, clock),
		// A delivery is read from its rows; the artifacts are the pages' to download.
		deliveries: delivery.NewService(db, func(string) (delivery.Workspace, error) {
			return nil, refusal.Errorf(refusal.Conflict, "The artifacts are downloaded from the intent's page.")
		}, clock),
		writes: &ownerWrites{root: root}}, nil
}

// Close closes what was opened.
func (s *mcpStores) Close() error {
	return errors.Join(s.writes.close(), s.knowledge.Close(), s.intents.Close())
}

// ownerWrites are the owner's writes `autoapp mcp` makes itself, over the
// intents store opened for writing (and migrated, as `intervention
// submit` does) on the first of them.
type ownerWrites struct {
	root string
	mu   sync.Mutex
	db   *migrations.DB
	all  intent.Services
	reqs *request.Service
}

func (w *ownerWrites) open() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db != nil {
		return nil
	}
	db, err := migrations.Open(filepath.Join(w.root, "launcher", "intents.sqlite"), migrations.Intents)
	if err != nil {
		return refusal.Errorf(refusal.Unavailable, "The intents store could not be opened for writing: %v", err)
	}
	w.db = db
	w.all = intent.New(db, w.root, clock, intent.Collaborators{Journal: request.Journal{}})
	w.reqs = request.NewService(db, w.all.Backlog, clock)
	return nil
}

func (w *ownerWrites) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db == nil {
		return nil
	}
	return w.db.Close()
}

// SubmitIntervention is the inbox's.
func (w *ownerWrites) SubmitIntervention(ctx context.Context, intentID int64, requestID string, kind intent.InterventionKind, text string) (intent.Receipt, bool, error) {
	if err := w.open(); err != nil {
		return intent.Receipt{}, false, err
	}
	return w.all.Interventions.SubmitIntervention(ctx, intentID, requestID, kind, text)
}

// AnswerTask is the backlog's.
func (w *ownerWrites) AnswerTask(ctx context.Context, taskID int64, answer string) error {
	if err := w.open(); err != nil {
		return err
	}
	return w.all.Backlog.AnswerTask(ctx, taskID, answer)
}

// ApproveShown is the requests'.
func (w *ownerWrites) ApproveShown(ctx context.Context, id int64, seen int, opID, shown string) (request.State, error) {
	if err := w.open(); err != nil {
		return request.State{}, err
	}
	return w.reqs.ApproveShown(ctx, id, seen, opID, shown)
}
