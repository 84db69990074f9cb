// Command server is Dedup Studio: with no arguments (or "serve") it serves the web
// application; its other subcommands are the engine's command-line face.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is the process's status after run: 0 when it did what was asked, help
// included (-h, -help: the usage was what was asked for), 2 otherwise.
func exitCode(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

func run(args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if now, ok := oldNames[cmd]; ok {
		deprecated(stderr, cmd, now)
		cmd = now
	}
	switch cmd {
	case "serve":
		return serve(args, stderr)
	case "signatures":
		return signatures(args, stdout, stderr)
	case "shape":
		return shape(args, stdout, stderr)
	case "import":
		return importDocs(args, stdout, stderr)
	case "import-labels":
		return importLabels(args, stdout, stderr)
	case "import-results":
		return importResults(args, stdout, stderr)
	case "manifest":
		return manifestCmd(args, stdout, stderr)
	case "sweep":
		return sweepCmd(args, stdout, stderr)
	case "handoff":
		return exportCmd(args, stdout, stderr)
	case "audit":
		return auditCmd(args, stdout, stderr)
	case "corpus-run":
		return dedupCmd(args, stdout, stderr)
	case "gencorpus":
		return gencorpusCmd(args, stdout, stderr)
	case "help":
		// "server help COMMAND" is "server COMMAND -h": its flags and an example.
		if len(args) > 0 && args[0] != "help" && args[0] != "" && args[0][0] != '-' {
			return run([]string{args[0], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return nil
	default:
		usage(stderr)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Dedup Studio: calibrate and review MinHash LSH near-duplicate removal.

Usage:
  server [serve] [-addr 127.0.0.1:8080]     start the web application
  server signatures -spec SPEC -in F -out F compute MinHash signatures of a JSONL file
  server shape -threshold T -hashes K       choose bands x rows for a threshold
  server import -db F -in F [-dataset N]    import documents (JSONL, CSV/TSV, Parquet)
  server import-labels -db F -dataset N -in F  import labeled pairs
  server import-results -db F -dataset N -format F -in F  an engine's results at scale, as a manifest to review
  server sweep -db F -campaign N [-grid F] [-out F]  score a grid of configurations against the labels
  server manifest export -db F -manifest ID -out DIR  export a signed-off manifest and write its files
  server handoff -db F -manifest ID -format milvus|datasketch|datatrove|json|all -out DIR
                                            a manifest's settings for the engines that run at scale
  server audit verify -db F                 check the audit log's hash chain
  server corpus-run -config F -in F -out DIR  run a settings.json over a whole corpus: a manifest to review
  server gencorpus -n N -seed S -out F      a synthetic corpus of real text with planted duplicates

Run "server COMMAND -h" (or "server help COMMAND") for a command's flags and an example.
"export" and "dedup", the old names of "handoff" and "corpus-run", still work and say so.
`)
}

// oldNames maps the commands' names before issue 26.5, kept for scripts, to their names
// now.
var oldNames = map[string]string{"export": "handoff", "dedup": "corpus-run"}

// deprecated tells the user of an old command name the new one; the command then runs.
func deprecated(stderr io.Writer, old, now string) {
	fmt.Fprintf(stderr, "note: \"server %s\" is now \"server %s\"; the old name still works for now\n", old, now)
}

// parseFlags parses a command's flags and refuses what is left after them: no command
// takes arguments, and a word typed there (a value without its flag, or every flag after
// a stray word, which the flag package stops at) would otherwise be ignored in silence.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q: %s takes flags only", fs.Arg(0), fs.Name())
	}
	return nil
}

// newFlagSet returns a flag set whose -h prints the usage line, the example and the flags.
func newFlagSet(name, synopsis, example string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nExample:\n  %s\n\nFlags:\n", synopsis, example)
		fs.PrintDefaults()
	}
	return fs
}

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// openStore opens the existing store at path for a command that reads or changes it
// (db.OpenExisting: a mistyped -db is an error, not a new empty store), with a context
// that Ctrl+C and SIGTERM cancel. done closes the store and stops listening for them.
func openStore(path string) (ctx context.Context, store *db.DB, done func(), err error) {
	ctx, stop := signalContext()
	if store, err = db.OpenExisting(ctx, path); err != nil {
		stop()
		return nil, nil, nil, err
	}
	return ctx, store, func() { store.Close(); stop() }, nil
}
