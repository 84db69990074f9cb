package main

import (
	"io"

	"github.com/dedupstudio/dedupstudio/internal/server"
)

func serve(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve", "server serve: start the Dedup Studio web application.",
		"go run ./cmd/server -addr 127.0.0.1:8080", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	log := newLogger(stderr)
	return server.Run(ctx, server.Config{Addr: *addr, Log: log, Version: version})
}
