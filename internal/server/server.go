// Package server runs Dedup Studio's HTTP server: listen, serve with timeouts, and shut
// down gracefully when the context ends.
//
// What a client can hold is bounded: request headers must arrive within 10 s and a
// whole request within ReadTimeout (30 s) on every route but the uploads, whose
// deadline web moves along while their bodies arrive; connections are capped below the
// descriptor limit, and at the cap the connection that has waited longest without being
// served makes room for a new one (conns.go), so /healthz answers through a flood of
// slow connections.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Config is what Run needs.
type Config struct {
	Addr string // host:port; port 0 picks a free one
	Log  *slog.Logger
	// Handler answers the requests: the application (web.New), which cmd/server builds
	// with its services; required.
	Handler http.Handler
	// SetupPath, when set, is the one-time path that creates the first admin
	// ("/setup?token=…"): once the server answers, Run prints the link (the URL it
	// listens on and SetupPath) on Console and passes it to Ready.
	SetupPath string
	// Ready, if set, is called with the URL the server listens on once it answers
	// requests (it is serving, not only listening), and the one-time setup link when
	// there is one (SetupPath).
	Ready func(url, setupLink string)
	// Console receives the setup link for a person to open (the terminal); may be nil.
	Console io.Writer
	// TLSCert and TLSKey serve HTTPS directly; both or neither.
	TLSCert, TLSKey string
	// MaxConns caps the connections held open at once; 0 derives it from the process's
	// descriptor limit (at most 4096, a quarter of the limit left for everything else).
	MaxConns int
	// ReadTimeout bounds reading a whole request, headers and body, on every route but
	// the uploads; default DefaultReadTimeout.
	ReadTimeout time.Duration
	// UploadDir is the folder Handler keeps uploads in while it imports them
	// (UploadDir of the database file); Run empties it before it serves (CleanUploads):
	// what is there was left by a process that died. "" is none.
	UploadDir string
}

// Timeouts of the server.
const (
	// DefaultReadTimeout bounds reading a request on every route but the uploads: a form
	// of at most 1 MB, so a client that takes longer is holding the connection.
	DefaultReadTimeout = 30 * time.Second
	readHeaderTimeout  = 10 * time.Second
	// writeTimeout bounds writing a response (large exports).
	writeTimeout = 5 * time.Minute
	idleTimeout  = 2 * time.Minute
)

// maxConns is cfg's connection cap, or one derived from the descriptor limit.
func maxConns(cfg Config) int {
	if cfg.MaxConns > 0 {
		return cfg.MaxConns
	}
	limit, err := fdLimit()
	if err != nil {
		cfg.Log.Warn("descriptor limit unknown: capping connections at 1024", "err", err)
		return 1024
	}
	return maxConnsFor(limit)
}

// browsable turns a listening address into one a browser on this machine can open:
// an unspecified host (0.0.0.0, ::) becomes localhost.
func browsable(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// readyListener closes ready when the server first asks it for a connection: from then
// on a request is answered.
type readyListener struct {
	net.Listener
	ready chan struct{}
	once  sync.Once
}

func (l *readyListener) Accept() (net.Conn, error) {
	l.once.Do(func() { close(l.ready) })
	return l.Listener.Accept()
}

// Run serves until ctx is done, then gives requests in flight up to ten seconds to finish.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Handler == nil {
		return errors.New("server: no handler")
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return errors.New("give both -tls-cert and -tls-key, or neither")
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.UploadDir != "" {
		// Uploads a killed process left behind go before any new one arrives.
		if err := CleanUploads(cfg.UploadDir, cfg.Log); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	conns := newConnLimiter(ln, maxConns(cfg))
	srv := &http.Server{
		Handler:           conns.track(cfg.Handler),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout, // web extends it for the upload routes
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         conns.connState,
		ConnContext:       conns.connContext,
		ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	if cfg.TLSCert != "" {
		scheme = "https"
	}
	url := scheme + "://" + browsable(ln.Addr())
	// Serve first; say where only once the server is taking connections, so the
	// link on the console answers when it is opened.
	accepting := make(chan struct{})
	rl := &readyListener{Listener: conns, ready: accepting}
	errc := make(chan error, 1)
	go func() {
		if cfg.TLSCert != "" {
			errc <- srv.ServeTLS(rl, cfg.TLSCert, cfg.TLSKey)
			return
		}
		errc <- srv.Serve(rl)
	}()
	select {
	case <-accepting:
	case err := <-errc:
		return err
	}
	cfg.Log.Info("listening on "+url, "url", url, "max_conns", conns.max, "read_timeout", cfg.ReadTimeout)
	var setupLink string
	if cfg.SetupPath != "" {
		setupLink = url + cfg.SetupPath
		if cfg.Console != nil {
			fmt.Fprintf(cfg.Console, "\nNo accounts yet. Open this one-time link to create the first admin account:\n\n    %s\n\n", setupLink)
		}
	}
	if cfg.Ready != nil {
		cfg.Ready(url, setupLink)
	}
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
