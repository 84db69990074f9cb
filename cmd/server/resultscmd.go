package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	engineresults "github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// importResults runs "import-results": a production engine's results as a manifest for
// review.
func importResults(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import-results",
		"server import-results: bring back what an engine that ran at scale decided, as a draft manifest of a\n"+
			"dataset for review: datatrove (the output folder of MinhashDedupCluster(save_cluster_id=True), remove_ids/,\n"+
			"with the doc_ids/ folder beside it that the exported pipeline writes; a single .clusters file with its\n"+
			".remove beside it for the keepers; or the JSONL documents MinhashDedupFilter(load_cluster_ids=True)\n"+
			"writes), text-dedup (its output kept unfiltered with __CLUSTER__ and __INDEX__ columns; JSONL, CSV or\n"+
			"Parquet), milvus (the JSON lines the handed-off Milvus scripts write: {\"id\", \"hits\": [{\"id\",\n"+
			"\"distance\"}]}), datasketch (the JSON lines the handed-off datasketch program writes: {\"id\",\n"+
			"\"matches\": [{\"id\", \"jaccard\"}]}), pairs (id_a,id_b,score as CSV, TSV or JSONL) or manifest (removals.jsonl/.csv of the\n"+
			"review format: the dedup command's, or an export). Pairs become clusters (connected components);\n"+
			"keepers are the engine's where the file says, else the configuration's keeper rule. Every document\n"+
			"must be in the dataset (-skip-unknown skips and counts those that are not). All or nothing: a bad\n"+
			"record, an unknown id or Ctrl+C stores nothing. More clusters than -sample: a stratified random sample\n"+
			"by cluster size and weakest link goes to review, and the sign-off record says how it was drawn.",
		"go run ./cmd/server import-results -db dedupstudio.db -dataset crawl -format datatrove -in minhash/remove_ids -manifest 3", stderr)
	dbPath := fs.String("db", "dedupstudio.db", "database file (must exist)")
	dataset := fs.String("dataset", "", "the dataset the engine deduplicated, by name (its newest version) or id")
	format := fs.String("format", "", "datatrove, text-dedup, milvus, datasketch, pairs or manifest")
	in := fs.String("in", "", "the results file (JSONL, CSV and TSV may be gzip or zstd), or datatrove's remove_ids folder")
	ids := fs.String("ids", "", "datatrove, with a remove_ids folder as -in: the folder of the ids each task read, NNNNNN.ids (default: doc_ids\nbeside the -in folder, as the exported pipeline writes it)")
	remove := fs.String("remove", "", "datatrove: the .remove file beside a .clusters file (default: its sibling when it exists), or the\nexclusion writer's JSONL beside the filter's kept output given as -in: datatrove's own keepers")
	manifest := fs.Int64("manifest", 0, "take the configuration production ran from this manifest (the one handed to the engine)")
	config := fs.String("config", "", "or from this settings.json (what export -format json writes, read as strictly as dedup -config\nreads it); a manifest file names its own, and one given that differs from its rows is refused")
	idField := fs.String("id-field", "id", "text-dedup, datatrove JSONL: the document id column")
	clusterField := fs.String("cluster-field", "", "text-dedup: the cluster column (default __CLUSTER__, or __cluster__)")
	indexField := fs.String("index-field", "", "text-dedup: the index column (default __INDEX__, or __index__)")
	textField := fs.String("text-field", "text", "text-dedup Parquet: the text column the file must have (not stored)")
	keepers := fs.String("keepers", "file", "file: the engine's keepers where the file gives them, else the rule; rule: the configuration's keeper rule everywhere")
	skipUnknown := fs.Bool("skip-unknown", false, "skip and count records naming a document the dataset does not have, instead of refusing the file")
	sample := fs.Int("sample", manifests.DefaultSample, "clusters to review; more than this and a stratified sample is drawn (0: review every cluster)")
	seed := fs.Uint64("seed", 1, "the sample's seed (the same seed over the same file draws the same clusters)")
	approvals := fs.Int("approvals", review.DefaultApprovals, "approvals the manifest needs to be signed off (fewer than the default is recorded as a lowering)")
	as := fs.String("as", "", "the account the manifest is prepared by (default: none, recorded as cli:$USER, or the system's name for\nthe user running it; with neither, -as is required)")
	maxRows := fs.Int("max-rows", engineresults.DefaultMaxRows, "most rows the file may hold, good or bad (0: no cap); a pair or membership given\nin many rows is read once, but every row takes time")
	otherDataset := fs.Bool("other-dataset", false, "manifest: import a file whose rows name another dataset into -dataset (refused otherwise)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" || *dataset == "" || *format == "" {
		fs.Usage()
		return errors.New("-dataset, -format and -in are required")
	}
	f, err := engineresults.ParseFormat(*format)
	if err != nil {
		return fmt.Errorf("-format: %w", err)
	}
	if *keepers != "file" && *keepers != "rule" {
		return fmt.Errorf("-keepers: want file or rule, not %q", *keepers)
	}
	if *manifest != 0 && *config != "" {
		return errors.New("-manifest and -config both name a configuration: give one")
	}
	ctx, store, done, err := openStore(*dbPath)
	if err != nil {
		return err
	}
	defer done()
	ds, err := resolveDataset(ctx, store, *dataset)
	if err != nil {
		return err
	}
	req := manifests.ImportRequest{DatasetID: ds.ID, Format: f, SkipUnknown: *skipUnknown, IgnoreFileKeepers: *keepers == "rule",
		Sample: *sample, Seed: *seed, ApprovalsRequired: *approvals, OtherDataset: *otherDataset,
		Options: engineresults.Options{IDField: *idField, ClusterField: *clusterField, IndexField: *indexField, TextField: *textField,
			MaxRows: int(noCapIsNegative(int64(*maxRows)))}}
	if *as == "" {
		name, err := cliUser(os.Getenv, user.Current)
		if err != nil {
			return err
		}
		req.ByName = "cli:" + name
		req.By = db.User{Name: req.ByName} // no account: the audit log names the command's user
	}
	if *sample == 0 {
		req.Sample = -1
	}
	switch {
	case *manifest != 0:
		m, err := manifestByID(ctx, store, *manifest)
		if err != nil {
			return err
		}
		req.Params = &m.Params
	case *config != "":
		cf, err := os.Open(*config)
		if err != nil {
			return err
		}
		p, _, err := handoff.ParseSettings(cf, *config)
		cf.Close()
		if err != nil {
			return err
		}
		req.Params = &p
	}
	if *as != "" {
		u, err := accountAs(ctx, store, *as)
		if err != nil {
			return err
		}
		req.By, req.ByName = u, u.Name
	}
	if st, err := os.Stat(*in); err == nil && st.IsDir() {
		folder, err := datatroveFolder(f, *in, *ids, *remove)
		if err != nil {
			return err
		}
		req.Folder = &folder
		if folder.IDs != nil {
			fmt.Fprintf(stderr, "document ids from %s\n", folder.IDsName)
		}
	} else if *ids != "" {
		return errors.New("-ids goes with a remove_ids folder as -in (datatrove)")
	}
	if req.Folder == nil {
		file, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil {
			return err
		}
		req.File = engineresults.Source{Name: filepath.Base(*in), Reader: file, At: file, Size: st.Size()}
	}
	rmPath := *remove
	if rmPath == "" && f == engineresults.Datatrove && strings.HasSuffix(*in, ".clusters") {
		if sib := strings.TrimSuffix(*in, ".clusters") + ".remove"; fileExists(sib) {
			rmPath = sib
		}
	}
	if rmPath != "" {
		rf, err := os.Open(rmPath)
		if err != nil {
			return err
		}
		defer rf.Close()
		req.Remove = engineresults.Source{Name: filepath.Base(rmPath), Reader: rf}
		fmt.Fprintf(stderr, "keepers from %s\n", rmPath)
	}
	last := ""
	m, err := manifests.ImportResults(ctx, store, req, func(p manifests.Progress) {
		if p.Phase != last {
			last = p.Phase
			fmt.Fprintf(stderr, "%s\n", p.Phase)
		}
	})
	if err != nil {
		return err
	}
	o := m.Origin
	fmt.Fprintf(stdout, "manifest %d (draft) of dataset %q version %d: %s, %s from %s (%s, %s); keepers by %s\n",
		m.ID, ds.Name, ds.Version, review.Quantity(o.Clusters, "cluster", "clusters"), review.Quantity(o.Removals, "removal", "removals"),
		o.File, o.Format, review.Quantity(o.Records, "record", "records"), o.Keepers)
	if o.Skipped > 0 {
		fmt.Fprintf(stdout, "skipped %s naming documents the dataset does not have (e.g. %s)\n",
			review.Quantity(o.Skipped, "record", "records"), strings.Join(o.SkippedIDs, ", "))
	}
	if o.Sample != nil {
		fmt.Fprintf(stdout, "review: %s\n", o.Sample)
	} else {
		fmt.Fprintln(stdout, "review: every cluster")
	}
	return nil
}

// datatroveFolder is the remove_ids folder in, with the ids each task read: ids, or the
// doc_ids folder beside in when it exists.
func datatroveFolder(f engineresults.Format, in, ids, remove string) (engineresults.Folder, error) {
	if f != engineresults.Datatrove {
		return engineresults.Folder{}, fmt.Errorf("-in %s is a folder: only -format datatrove reads one (MinhashDedupCluster's remove_ids)", in)
	}
	if remove != "" {
		return engineresults.Folder{}, errors.New("-remove goes with a single .clusters file: a remove_ids folder holds the .remove files itself")
	}
	folder := engineresults.Folder{Name: filepath.Base(filepath.Clean(in)), Dir: os.DirFS(in)}
	if ids == "" {
		if sib := filepath.Join(filepath.Dir(filepath.Clean(in)), "doc_ids"); dirExists(sib) {
			ids = sib
		}
	}
	if ids != "" {
		if !dirExists(ids) {
			return engineresults.Folder{}, fmt.Errorf("-ids %s: not a folder", ids)
		}
		folder.IDsName, folder.IDs = filepath.Base(filepath.Clean(ids)), os.DirFS(ids)
	}
	return folder, nil
}

func dirExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// cliActor is how the audit log names a command run without an account: cli:$USER, else
// cli: and the system's name for the user, else its uid. "cli:" alone, as it was with
// $USER unset, named no one.
func cliActor() string {
	if name, err := cliUser(os.Getenv, user.Current); err == nil {
		return "cli:" + name
	}
	return fmt.Sprintf("cli:uid %d", os.Getuid())
}

// cliUser is who runs a command without an account: $USER, else the system's name for
// the user (os/user); with neither, the import refuses and asks for -as, since an
// importer recorded as "cli:" binds no one.
func cliUser(getenv func(string) string, current func() (*user.User, error)) (string, error) {
	if name := strings.TrimSpace(getenv("USER")); name != "" {
		return name, nil
	}
	if u, err := current(); err == nil && strings.TrimSpace(u.Username) != "" {
		return strings.TrimSpace(u.Username), nil
	}
	return "", errors.New("-as: $USER is unset and the system names no user for this process: give -as ACCOUNT, the account that prepares the manifest")
}

// accountAs is the enabled account a command's -as names: what the command does is
// recorded as that person's.
func accountAs(ctx context.Context, store *db.DB, name string) (db.User, error) {
	u, err := store.UserByName(ctx, name)
	if errors.Is(err, db.ErrNotFound) || (err == nil && u.Disabled) {
		return db.User{}, fmt.Errorf("-as %s: no enabled account of that name", name)
	}
	return u, err
}

// manifestByID is the manifest a command's -manifest names.
func manifestByID(ctx context.Context, store *db.DB, id int64) (db.Manifest, error) {
	m, err := store.Manifest(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return m, fmt.Errorf("-manifest: no manifest %d in %s", id, store.Path())
	}
	return m, err
}

// resolveDataset finds a dataset by name (its newest version) or, failing that, by id.
func resolveDataset(ctx context.Context, store *db.DB, s string) (db.Dataset, error) {
	ds, err := store.LatestDataset(ctx, s)
	if err == nil || !errors.Is(err, db.ErrNotFound) {
		return ds, err
	}
	if id, perr := strconv.ParseInt(s, 10, 64); perr == nil {
		if ds, err := store.Dataset(ctx, id); err == nil || !errors.Is(err, db.ErrNotFound) {
			return ds, err
		}
	}
	return db.Dataset{}, fmt.Errorf("-dataset: no dataset named or numbered %q in %s", s, store.Path())
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
