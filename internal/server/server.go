// Package server runs Dedup Studio's HTTP server: listen, serve with timeouts, and shut
// down gracefully when the context ends.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/web"
)

// Config is what Run needs.
type Config struct {
	Addr    string // host:port; port 0 picks a free one
	Log     *slog.Logger
	Store   *db.DB
	Version string
	// Ready, if set, is called with the URL the server listens on once it accepts connections.
	Ready func(url string)
}

// Run serves until ctx is done, then gives requests in flight up to ten seconds to finish.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           web.New(web.Deps{Log: cfg.Log, Version: cfg.Version, Store: cfg.Store, Jobs: jobs.NewRegistry()}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute, // uploads of large samples
		WriteTimeout:      5 * time.Minute, // large exports
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String()
	cfg.Log.Info("listening", "url", url)
	if cfg.Ready != nil {
		cfg.Ready(url)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cfg.Log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
