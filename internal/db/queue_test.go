package db

import (
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/migrations"
)

// openAt opens a new database with the migrations numbered below upTo only.
func openAt(t *testing.T, upTo int) *DB {
	t.Helper()
	ms, err := readMigrations(migrations.Files)
	if err != nil {
		t.Fatal(err)
	}
	older := fstest.MapFS{}
	for _, m := range ms {
		if m.version < upTo {
			older[m.name] = &fstest.MapFile{Data: []byte(m.sql)}
		}
	}
	path := filepath.Join(t.TempDir(), "old.db")
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	d := &DB{w: w, path: path, now: time.Now, writeTurn: make(chan struct{}, 1)}
	if err := d.migrate(t.Context(), fs.FS(older)); err != nil {
		t.Fatal(err)
	}
	if d.r, err = sql.Open("sqlite", dsn(path, true)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// standing computes a pair's standing-label columns from its history, the slow way.
func standing(hist []LabelEvent) (n int, adjudicated bool, answers int, labelers []string) {
	latest := map[string]LabelEvent{}
	for _, e := range hist {
		if e.Kind.SetsLabel() {
			latest[e.Annotator] = e
		}
	}
	distinct := map[string]bool{}
	for _, e := range latest {
		if e.Kind != labels.KindRetract {
			labelers = append(labelers, e.Annotator)
		}
		switch e.Kind {
		case labels.KindLabel:
			n++
			distinct[fmt.Sprint(e.Category, e.Duplicate)] = true
		case labels.KindAdjudication:
			n++
			adjudicated = true
		}
	}
	slices.Sort(labelers)
	return n, adjudicated, len(distinct), labelers
}

// Migration 0008 fills each pair's standing label count, adjudication and distinct
// answers from the events already there, and its trigger keeps them on every event
// after: both agree with the history, computed the slow way, after random sequences of
// labels, edits, undos, adjudications, skips and flags.
func TestStandingColumnsFollowTheEvents(t *testing.T) {
	t.Parallel()
	d := openAt(t, 8)
	ctx := t.Context()
	// Pairs by hand: AddPairs writes the columns of today's schema (0009's design).
	ds, docs := withDocs(t, d, "s", 7)
	c, err := d.EnsureCampaign(ctx, ds.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs[1:] {
		if _, err := d.w.ExecContext(ctx, `INSERT INTO label_pairs (campaign_id, doc_a, doc_b, origin, wanted, created_at)
			VALUES (?, ?, ?, 'test', 1, ?)`, c.ID, docs[0], doc, d.stamp()); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := d.PairDocs(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []int64
	for _, r := range refs {
		pairs = append(pairs, r.ID)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	people := []string{"ann", "bob", "cy", "rev"}
	cats := []string{"exact", "minor", "different"}
	randomEvents := func(n int) {
		for range n {
			p := pairs[rng.IntN(len(pairs))]
			who := people[rng.IntN(len(people))]
			kind := []labels.Kind{labels.KindLabel, labels.KindLabel, labels.KindLabel, labels.KindRetract, labels.KindAdjudication, labels.KindSkip, labels.KindFlag}[rng.IntN(7)]
			prev := int64(0)
			if e, err := d.LatestEvent(ctx, p, who); err == nil {
				prev = e.ID
			}
			if _, err := d.RecordEvent(ctx, c.ID, p, NewLabel{Annotator: who, Kind: kind, Category: cats[rng.IntN(len(cats))], Duplicate: rng.IntN(2) == 0}, prev); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(when string) {
		t.Helper()
		for _, p := range pairs {
			hist, _ := d.PairHistory(ctx, p)
			wantN, wantAdj, wantAnswers, wantLabelers := standing(hist)
			var n, answers int
			var adj bool
			var marks string
			if err := d.r.QueryRowContext(ctx, `SELECT labels_n, adjudicated, answers, labelers FROM label_pairs WHERE id = ?`, p).Scan(&n, &adj, &answers, &marks); err != nil {
				t.Fatal(err)
			}
			labelers := strings.FieldsFunc(marks, func(r rune) bool { return r == 0x1f })
			slices.Sort(labelers)
			if n != wantN || adj != wantAdj || answers != wantAnswers || !slices.Equal(labelers, wantLabelers) {
				t.Errorf("%s: pair %d has labels_n %d, adjudicated %v, answers %d, labelers %q; its history says %d, %v, %d, %q",
					when, p, n, adj, answers, labelers, wantN, wantAdj, wantAnswers, wantLabelers)
			}
		}
	}
	randomEvents(120)
	if err := d.migrate(ctx, migrations.Files); err != nil {
		t.Fatal(err)
	}
	check("after the migration")
	randomEvents(300)
	check("after more events")
	// New pairs go after the ranked ones, in the order they came.
	var unranked int
	d.r.QueryRowContext(ctx, `SELECT count(*) FROM label_pairs WHERE queue_rank < 1099511627776`).Scan(&unranked)
	if ids, err := d.UnrankedCampaigns(ctx); err != nil || len(ids) != 1 || unranked != 0 {
		t.Errorf("UnrankedCampaigns = %v, %v (%d pairs ranked); want campaign %d, none ranked", ids, err, unranked, c.ID)
	}
}
