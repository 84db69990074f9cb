package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpusrun"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	engineresults "github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/searchindex"
	"github.com/dedupstudio/dedupstudio/internal/server"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/web"
)

func serve(args []string, stderr io.Writer) error {
	dbPath, loadDemo, cfg, err := serveFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	return serveUntil(ctx, dbPath, loadDemo, cfg)
}

// serveConfig is what serve runs with: the HTTP server's settings (server.Config:
// where it listens, TLS, connection caps; its Handler is built by serveUntil) and the
// application's.
type serveConfig struct {
	server.Config
	Version    string
	TrustProxy bool
	// KDF overrides the password hashing cost (tests); zero means the default.
	KDF auth.Params
	// MaxImportBytes and MaxImportDocs cap one uploaded sample once decompressed, in
	// bytes and records (see web.Deps: 0 is the default, negative no cap).
	MaxImportBytes int64
	MaxImportDocs  int
	// MaxResultRows caps the rows of one uploaded results file (0 the default,
	// negative no cap).
	MaxResultRows int
	// CorpusRoot is the folder whose corpus files whole-corpus runs may read; "" is
	// corpusrun.CorpusDir of the database file.
	CorpusRoot string
}

// serveFlags reads serve's flags into the database file, the demo choice and the
// server's configuration.
func serveFlags(args []string, stderr io.Writer) (dbPath string, loadDemo bool, cfg serveConfig, err error) {
	fs := newFlagSet("serve", "server serve: start the Dedup Studio web application.",
		"go run ./cmd/server -addr 127.0.0.1:8080 -db dedupstudio.db", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	db := fs.String("db", "dedupstudio.db", "database file (created if missing); uploads are kept in FILE-uploads next to it")
	demo := fs.Bool("demo", true, "load the demo sample when the database has no datasets")
	tlsCert := fs.String("tls-cert", "", "TLS certificate file (PEM) to serve HTTPS")
	tlsKey := fs.String("tls-key", "", "TLS private key file (PEM)")
	trustProxy := fs.Bool("trust-proxy", false, "behind a TLS-terminating reverse proxy: trust its X-Forwarded-Proto for secure cookies")
	maxConns := fs.Int("max-conns", 0, "connections held open at once (0: from the descriptor limit, at most 4096)")
	maxInputMB := fs.Int64("max-input-mb", ingest.DefaultMaxInputBytes>>20, "most data one uploaded sample may hold once decompressed, in MiB (0: no cap)")
	maxDocs := fs.Int("max-docs", ingest.DefaultMaxDocs, "most records one uploaded sample may hold, good or bad (0: no cap)")
	maxResultRows := fs.Int("max-result-rows", engineresults.DefaultMaxRows, "most rows one uploaded results file may hold, good or bad (0: no cap)")
	corpusRoot := fs.String("corpus-root", "", "folder of the corpus files whole-corpus runs started from the UI may read (default: FILE-corpora next to -db);\nthe server reads nothing outside it, and writes those runs' output to FILE-dedup")
	// "server -h" lands here (serve is the default command): say where the others are.
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(stderr, "\nThe other commands (signatures, sweep, import, handoff, audit verify, ...): run \"server help\".")
	}
	if err := parseFlags(fs, args); err != nil {
		return "", false, serveConfig{}, err
	}
	cfg = serveConfig{Config: server.Config{Addr: *addr, Log: newLogger(stderr), Console: stderr, TLSCert: *tlsCert, TLSKey: *tlsKey,
		MaxConns: *maxConns}, Version: version, TrustProxy: *trustProxy,
		MaxImportBytes: noCapIsNegative(*maxInputMB << 20), MaxImportDocs: int(noCapIsNegative(int64(*maxDocs))),
		MaxResultRows: int(noCapIsNegative(int64(*maxResultRows))), CorpusRoot: *corpusRoot}
	return *db, *demo, cfg, nil
}

// noCapIsNegative turns a flag's "0: no cap" into serveConfig's, where 0 is the default.
func noCapIsNegative(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// jobsStopTimeout bounds the wait for background jobs at shutdown: a cancelled import
// only discards its staged version.
const jobsStopTimeout = 30 * time.Second

// cleanupEvery is how often stale imports are looked for (and failed cleanups retried).
const cleanupEvery = time.Minute

// serveUntil opens the store, builds the application's services and its handler, and
// serves until ctx ends (SIGINT, SIGTERM). This is the one place where the services
// are made and recovered: sweeps and whole-corpus runs a dead process left running are
// marked interrupted before anything is served (and server.Run removes the uploads it
// left). Imports
// left behind are cleaned up beside the server, as a background job, so a large one
// does not keep the server from listening; the label tallies and the search indexes
// are read ahead the same way. At the end, in this order: the server stops taking
// requests and finishes those in flight, the background jobs (cancelled with ctx) are
// waited for, and only then the store closes, since a cancelled import discards its
// staged dataset version through it on its way out.
func serveUntil(ctx context.Context, dbPath string, loadDemo bool, cfg serveConfig) (err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := lsh.UseKernel(os.Getenv(lsh.KernelEnv)); err != nil {
		return fmt.Errorf("%s: %w", lsh.KernelEnv, err)
	}
	// Sweeps and runs sign with the classic schemes' permutation kernel: which one, and why.
	cfg.Log.Info("permutation kernel "+lsh.Kernel(), "kernel", lsh.Kernel(), "why", lsh.KernelReason(),
		"measured", lsh.KernelCalibration())
	store, err := db.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	reg := jobs.NewRegistry(ctx)
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), jobsStopTimeout)
		defer cancel()
		jerr := reg.Shutdown(stopCtx) // first: the jobs use the store while they stop
		cerr := store.Close()
		if jerr != nil {
			jerr = fmt.Errorf("background jobs: %w", jerr)
		}
		err = errors.Join(err, jerr, cerr)
	}()
	if _, err := reg.Start("cleanup", "stale imports", 0, func(ctx context.Context, _ jobs.Reporter) (any, error) {
		server.CleanImports(ctx, store, cfg.Log, cleanupEvery)
		return nil, nil
	}); err != nil {
		return err
	}
	if loadDemo {
		if err := server.LoadDemoIfEmpty(ctx, store, cfg.Log); err != nil {
			return err
		}
	}
	// Campaigns whose pairs came before the queue was ranked (or whose import stopped
	// short of it) get their order now.
	if err := campaign.RankUnranked(ctx, store); err != nil {
		return err
	}
	// The default grid's shapes, computed once per process: the first sweep form posted
	// finds them ready.
	sweep.WarmShapes()
	deps, err := services(ctx, store, reg, cfg)
	if err != nil {
		return err
	}
	// A database without users gets a one-time link that creates the first admin.
	n, err := store.CountUsers(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		deps.SetupToken, _ = auth.NewToken()
		cfg.SetupPath = "/setup?token=" + deps.SetupToken
	}
	cfg.Handler, cfg.UploadDir = web.New(deps), deps.UploadDir
	return server.Run(ctx, cfg.Config)
}

// services builds what the handlers need over store and reg, each service once for the
// process, and recovers what a dead process left: sweeps and whole-corpus runs found
// running are marked interrupted (they can be resumed). The label tallies and the search
// indexes are read ahead in background jobs; a page or a search that comes first reads
// what it needs itself.
func services(ctx context.Context, store *db.DB, reg *jobs.Registry, cfg serveConfig) (web.Deps, error) {
	sigs := sigcache.New(store)
	d := web.Deps{Log: cfg.Log, Version: cfg.Version, Store: store, Jobs: reg, TrustProxy: cfg.TrustProxy, KDF: cfg.KDF,
		MaxImportBytes: cfg.MaxImportBytes, MaxImportDocs: cfg.MaxImportDocs, MaxResultRows: cfg.MaxResultRows,
		UploadDir:  server.UploadDir(store.Path()),
		Signatures: sigs, Sweeps: sweeprun.New(store, sigs, reg), Tally: campaign.NewTally(store),
		SearchIndexes: searchindex.New(store, cfg.Log),
		CorpusRuns:    corpusrun.New(store, reg, corpusrun.Config{Root: cfg.CorpusRoot, Log: cfg.Log})}
	if n, err := d.Sweeps.MarkInterrupted(ctx); err != nil {
		return d, err
	} else if n > 0 {
		cfg.Log.Info("sweeps left running by an earlier process marked interrupted", "sweeps", n)
	}
	// The campaigns' labels the sweeps pages compare with, read in the background.
	if _, err := reg.Start("sweep-labels", "sweeps' labels", 0, func(ctx context.Context, _ jobs.Reporter) (any, error) {
		err := d.Sweeps.Warm(ctx)
		if err != nil && ctx.Err() == nil {
			cfg.Log.Warn("reading the sweeps' labels ahead failed; the pages read them when first shown", "err", err)
		}
		return nil, err
	}); err != nil {
		return d, err
	}
	// So is a run over a dataset (saving its manifest, say): its page says so.
	if n, err := store.MarkRunsInterrupted(ctx); err != nil {
		return d, err
	} else if n > 0 {
		cfg.Log.Info("runs left running by an earlier process marked interrupted", "runs", n)
	}
	if n, err := d.CorpusRuns.MarkInterrupted(ctx); err != nil {
		return d, err
	} else if n > 0 {
		cfg.Log.Info("whole-corpus runs left running by an earlier process marked interrupted", "runs", n)
	}
	warmTally := func(ctx context.Context, _ jobs.Reporter) (any, error) {
		start := time.Now()
		err := d.Tally.Warm(ctx)
		if err != nil && ctx.Err() == nil {
			cfg.Log.Warn("reading the label tallies ahead failed; pages read them when first shown", "err", err)
		} else if err == nil {
			cfg.Log.Info("label tallies read", "duration", time.Since(start).Round(time.Millisecond))
		}
		return nil, err
	}
	if _, err := reg.Start("tallies", "label tallies", 0, warmTally); err != nil {
		return d, err
	}
	warmIndexes := func(ctx context.Context, _ jobs.Reporter) (any, error) {
		err := d.SearchIndexes.Warm(ctx)
		if err != nil && ctx.Err() == nil {
			cfg.Log.Warn("loading the search indexes ahead failed; each loads on its first search", "err", err)
		}
		return nil, err
	}
	if _, err := reg.Start("search-indexes", "search indexes", 0, warmIndexes); err != nil {
		return d, err
	}
	return d, nil
}
