package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// manifestCmd runs "manifest export".
func manifestCmd(args []string, stdout, stderr io.Writer) error {
	if err := wantVerb(args, "manifest export", "-db F -manifest ID -out DIR", stderr); err != nil {
		return err
	}
	fs := newFlagSet("manifest export",
		"server manifest export: export a signed-off manifest, as the Export button does, and write its files:\n"+
			"removals.csv (formula cells neutralised), removals.jsonl, split.jsonl (every document, kept or removed)\n"+
			"and signoff.json. The manifest's content hash and the dataset snapshot are recomputed from the store\n"+
			"and compared with the sign-off; a manifest or dataset that changed since is refused and nothing is\n"+
			"written. An exported manifest's files are written again (after the same check). Nothing is deleted:\n"+
			"removals are tombstones in the store.",
		"go run ./cmd/server manifest export -db dedupstudio.db -manifest 3 -out export/", stderr)
	mf := addManifestFlags(fs)
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if err := mf.required(fs); err != nil {
		return err
	}
	ctx, store, m, done, err := mf.open()
	if err != nil {
		return err
	}
	defer done()
	switch m.State {
	case review.SignedOff:
		n, err := manifests.Export(ctx, store, db.User{Name: cliActor()}, m, m.ContentHash)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "exported manifest %d: %s tombstoned\n", m.ID, review.Quantity(n, "document", "documents"))
		if m, err = store.Manifest(ctx, m.ID); err != nil {
			return err
		}
	case review.Exported:
	default:
		return fmt.Errorf("manifest %d is %s: only a signed-off manifest is exported", m.ID, m.State.Label())
	}
	root, err := openOut(*mf.out)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, name := range manifests.ExportFiles {
		err := writeWhole(root, name, func(w io.Writer) error { return manifests.WriteExport(ctx, store, m, name, w) })
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", strconv.Quote(filepath.Join(*mf.out, name)))
	}
	if head, err := store.ExportAuditHead(ctx, m.ID); err == nil {
		fmt.Fprintf(stdout, "audit chain head at the export: %s: keep it elsewhere; \"audit verify -head %s -entries %d\" checks it\n",
			head, head.Hash, head.Entries)
	}
	return nil
}

// wantVerb checks that args start with the second word of the two-word command cmd
// ("manifest export"); when not, it prints the command's usage, cmd then flags, and
// returns an error.
func wantVerb(args []string, cmd, flags string, stderr io.Writer) error {
	if _, verb, _ := strings.Cut(cmd, " "); len(args) == 0 || args[0] != verb {
		fmt.Fprintln(stderr, "usage: server "+cmd+" "+flags)
		return fmt.Errorf("want %q", cmd)
	}
	return nil
}

// manifestFlags are the flags of the commands that write a manifest's files: the store,
// the manifest and the folder to write into.
type manifestFlags struct {
	db  *string
	id  *int64
	out *string
}

func addManifestFlags(fs *flag.FlagSet) manifestFlags {
	return manifestFlags{
		db:  fs.String("db", "dedupstudio.db", "database file"),
		id:  fs.Int64("manifest", 0, "manifest id (on its page and in the list of manifests)"),
		out: fs.String("out", "", "directory to write the files into (created if needed)"),
	}
}

// required shows fs's usage and returns an error when -manifest or -out is missing.
func (f manifestFlags) required(fs *flag.FlagSet) error {
	if *f.id <= 0 || *f.out == "" {
		fs.Usage()
		return errors.New("-manifest and -out are required")
	}
	return nil
}

// open opens the store and reads the manifest; done closes the store.
func (f manifestFlags) open() (ctx context.Context, store *db.DB, m db.Manifest, done func(), err error) {
	ctx, store, done, err = openStore(*f.db)
	if err != nil {
		return nil, nil, m, nil, err
	}
	if m, err = manifestByID(ctx, store, *f.id); err != nil {
		done()
		return nil, nil, m, nil, err
	}
	return ctx, store, m, done, nil
}

// openOut makes the folder dir where missing and opens it as a root to write files
// under.
func openOut(dir string) (*os.Root, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenRoot(dir)
}

// writeWhole writes the file name under root whole under a temporary name, then renames
// it: a refusal or a failure never leaves half a file under the real name.
func writeWhole(root *os.Root, name string, write func(io.Writer) error) error {
	dir, base := path.Split(name)
	tmp := dir + "." + base + ".tmp"
	f, err := root.Create(tmp)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// auditCmd runs "audit verify".
func auditCmd(args []string, stdout, stderr io.Writer) error {
	if err := wantVerb(args, "audit verify", "-db F [-head HASH [-entries N]]", stderr); err != nil {
		return err
	}
	fs := newFlagSet("audit verify",
		"server audit verify: walk the audit log's hash chain and name the first entry that was edited, that has\n"+
			"no hash, or that follows a removed entry. Exits non-zero when the chain is broken. Prints the head (hash\n"+
			"and entries): every sign-off record and export publishes the head of its moment; give one kept elsewhere\n"+
			"with -head to detect entries cut off the end, or a chain rewritten and hashed again, which a chain alone\n"+
			"cannot show. Reads only: the file is opened read-only and left as it was.",
		`go run ./cmd/server audit verify -db dedupstudio.db -head "$(jq -r .audit_head_at_export.hash export/signoff.json)" -entries "$(jq -r .audit_head_at_export.entries export/signoff.json)"`, stderr)
	dbPath := fs.String("db", "dedupstudio.db", "database file")
	head := fs.String("head", "", "a chain head kept elsewhere (a sign-off record's audit_head.hash): some entry must carry it")
	entries := fs.Int("entries", 0, "with -head: the entries the head was published with (audit_head.entries)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	kept := review.AuditHead{Hash: strings.ToLower(strings.TrimSpace(*head)), Entries: *entries}
	if kept.Hash != "" && (len(kept.Hash) != 64 || strings.Trim(kept.Hash, "0123456789abcdef") != "") {
		return fmt.Errorf("-head: want the 64 hex digits of a chain head, not %q", *head)
	}
	if *entries != 0 && (kept.Hash == "" || *entries < 0) {
		return errors.New("-entries: give it with -head, as a number of entries of at least 1")
	}
	ctx, stop := signalContext()
	defer stop()
	c, err := db.VerifyAuditFile(ctx, *dbPath, kept)
	if err != nil {
		return err
	}
	switch {
	case c.BrokenAt != 0:
		return fmt.Errorf("audit log broken at entry %d: %s (%d entries checked)", c.BrokenAt, c.Problem, c.Rows)
	case !c.Intact():
		return fmt.Errorf("audit log: %s (%d entries checked, head %s)", c.Problem, c.Rows, c.Head)
	}
	fmt.Fprintf(stdout, "audit log intact: %d entries, head hash %s\n", c.Rows, c.Head)
	if kept.Hash != "" {
		fmt.Fprintf(stdout, "the head kept elsewhere is entry %d: nothing up to it was cut off or rewritten\n", c.KeptAt)
	}
	return nil
}
