package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
)

// DocumentChoices are what a person chooses for a document import, as written: the
// command line's flags (-dataset, -id-field, -text-field, -meta, -skip-bad,
// -new-version) and the upload form's fields of the same names. Both turn them into
// Options here, so the two cannot drift apart.
type DocumentChoices struct {
	Dataset     string
	Format      string // "" detects it from the file name
	IDField     string // "" is "id"
	TextField   string // "" is "text"
	Meta        string // see ParseMeta
	MaxDocBytes int    // 0 is corpus.DefaultMaxDocBytes
	SkipBad     bool
	NewVersion  bool
	// MaxInputBytes and MaxDocs cap one import (decompressed bytes, records); 0 is no
	// cap. The command line's -max-input-mb and -max-docs set them, and the server's
	// flags of the same names for uploads; both default to DefaultMaxInputBytes and
	// DefaultMaxDocs.
	MaxInputBytes int64
	MaxDocs       int
}

// Options returns the import options the choices make.
func (c DocumentChoices) Options() Options {
	return Options{
		Dataset: strings.TrimSpace(c.Dataset),
		Format:  corpus.Format(strings.TrimSpace(c.Format)),
		Corpus: corpus.Options{IDField: strings.TrimSpace(c.IDField), TextField: strings.TrimSpace(c.TextField),
			MetaFields: ParseMeta(c.Meta), MaxBytes: c.MaxDocBytes, MaxInputBytes: c.MaxInputBytes},
		SkipBad:    c.SkipBad,
		NewVersion: c.NewVersion,
		MaxDocs:    c.MaxDocs,
	}
}

// ParseMeta reads the metadata choice: "" keeps every field other than the id and the
// text, "-" keeps none, else a comma-separated list of the fields to keep.
func ParseMeta(s string) []string {
	switch s = strings.TrimSpace(s); s {
	case "":
		return nil
	case "-":
		return []string{}
	}
	out := []string{}
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// LabelChoices are what a person chooses for a label import, as written: the command
// line's flags (-dataset, -version, -campaign, -create, -annotator, -skip-bad) and the
// label form's fields of the same names.
type LabelChoices struct {
	Dataset   string
	Version   int    // 0 is the newest
	Campaign  string // "" is "default"
	Create    bool
	Annotator string // for rows that name none; "" is "import"
	SkipBad   bool
}

// Resolve finds the dataset version the labels go to and returns it with the options
// for Labels. A dataset or version that is not there is a *LabelError saying which
// there are.
func (c LabelChoices) Resolve(ctx context.Context, store *db.DB) (db.Dataset, LabelOptions, error) {
	name := strings.TrimSpace(c.Dataset)
	newest, err := store.LatestDataset(ctx, name)
	if errors.Is(err, db.ErrNotFound) {
		return db.Dataset{}, LabelOptions{}, &LabelError{Err: fmt.Errorf("no dataset named %q in %s (import its documents first)", name, store.Path())}
	}
	if err != nil {
		return db.Dataset{}, LabelOptions{}, err
	}
	ds := newest
	if c.Version != 0 && c.Version != newest.Version {
		ds, err = store.DatasetVersion(ctx, name, c.Version)
		if errors.Is(err, db.ErrNotFound) {
			return db.Dataset{}, LabelOptions{}, &LabelError{Err: fmt.Errorf("dataset %q has no version %d (the newest is %d)", name, c.Version, newest.Version)}
		}
		if err != nil {
			return db.Dataset{}, LabelOptions{}, err
		}
	}
	campaign := strings.TrimSpace(c.Campaign)
	if campaign == "" {
		campaign = "default"
	}
	return ds, LabelOptions{DatasetID: ds.ID, Campaign: campaign, Create: c.Create,
		Annotator: strings.TrimSpace(c.Annotator), SkipBad: c.SkipBad}, nil
}
