package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	engineresults "github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/server"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
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

// serveFlags reads serve's flags into the database file, the demo choice and the
// server's configuration.
func serveFlags(args []string, stderr io.Writer) (dbPath string, loadDemo bool, cfg server.Config, err error) {
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
	if err := fs.Parse(args); err != nil {
		return "", false, server.Config{}, err
	}
	cfg = server.Config{Addr: *addr, Log: newLogger(stderr), Version: version, Console: stderr,
		TLSCert: *tlsCert, TLSKey: *tlsKey, TrustProxy: *trustProxy, MaxConns: *maxConns,
		MaxImportBytes: noCapIsNegative(*maxInputMB << 20), MaxImportDocs: int(noCapIsNegative(int64(*maxDocs))),
		MaxResultRows: int(noCapIsNegative(int64(*maxResultRows))),
		CorpusRoot:    *corpusRoot}
	return *db, *demo, cfg, nil
}

// noCapIsNegative turns a flag's "0: no cap" into server.Config's, where 0 is the default.
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

// serveUntil opens the store and serves until ctx ends (SIGINT, SIGTERM). Imports left
// behind by a killed process are cleaned up beside the server, as a background job, so
// a large one does not keep the server from listening. At the end, in this order: the
// server stops taking requests and finishes those in flight, the background jobs
// (cancelled with ctx) are waited for, and only then the store closes, since a
// cancelled import discards its staged dataset version through it on its way out.
func serveUntil(ctx context.Context, dbPath string, loadDemo bool, cfg server.Config) (err error) {
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
	// A sweep found running was left by a process that died: it can be resumed.
	sweeps := sweeprun.New(store, sigcache.New(store), reg)
	if n, err := sweeps.MarkInterrupted(ctx); err != nil {
		return err
	} else if n > 0 {
		cfg.Log.Info("sweeps left running by an earlier process marked interrupted", "sweeps", n)
	}
	// The campaigns' labels the sweeps pages compare with, read in the background.
	if _, err := reg.Start("sweep-labels", "sweeps' labels", 0, func(ctx context.Context, _ jobs.Reporter) (any, error) {
		err := sweeps.Warm(ctx)
		if err != nil && ctx.Err() == nil {
			cfg.Log.Warn("reading the sweeps' labels ahead failed; the pages read them when first shown", "err", err)
		}
		return nil, err
	}); err != nil {
		return err
	}
	// So is a run over a dataset (saving its manifest, say): its page says so.
	if n, err := store.MarkRunsInterrupted(ctx); err != nil {
		return err
	} else if n > 0 {
		cfg.Log.Info("runs left running by an earlier process marked interrupted", "runs", n)
	}
	cfg.Store, cfg.Jobs, cfg.Sweeps = store, reg, sweeps
	return server.Run(ctx, cfg)
}
