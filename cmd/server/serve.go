package main

import (
	"io"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/server"
)

func serve(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", "server serve: start the Dedup Studio web application.",
		"go run ./cmd/server -addr 127.0.0.1:8080 -db dedupstudio.db", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	dbPath := fs.String("db", "dedupstudio.db", "database file (created if missing)")
	loadDemo := fs.Bool("demo", true, "load the demo sample when the database has no datasets")
	tlsCert := fs.String("tls-cert", "", "TLS certificate file (PEM) to serve HTTPS")
	tlsKey := fs.String("tls-key", "", "TLS private key file (PEM)")
	trustProxy := fs.Bool("trust-proxy", false, "behind a TLS-terminating reverse proxy: trust its X-Forwarded-Proto for secure cookies")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	log := newLogger(stderr)
	store, err := db.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	if *loadDemo {
		if err := server.LoadDemoIfEmpty(ctx, store, log); err != nil {
			return err
		}
	}
	return server.Run(ctx, server.Config{Addr: *addr, Log: log, Version: version, Store: store, Console: stderr,
		TLSCert: *tlsCert, TLSKey: *tlsKey, TrustProxy: *trustProxy})
}
