package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// import-results as a person types it: a CSV of pairs from the engine, an unknown id
// refused by line and field, then skipped and counted; the configuration from a manifest.
func TestImportResultsCommand(t *testing.T) {
	t.Parallel()
	path, m, rows := configManifest(t)
	configID := m.ID
	var csv strings.Builder
	csv.WriteString("id_a,id_b,score\n")
	for _, r := range rows {
		fmt.Fprintf(&csv, "%s,%s,0.97\n", r.KeeperExtID, r.ExtID)
	}
	csv.WriteString(rows[0].KeeperExtID + ",not-in-the-dataset,0.91\n")
	in := filepath.Join(t.TempDir(), "pairs.csv")
	if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"import-results", "-db", path, "-dataset", "cli", "-format", "pairs", "-in", in, "-manifest", fmt.Sprint(configID)}
	var stdout, stderr bytes.Buffer
	err := run(args, &stdout, &stderr)
	want := fmt.Sprintf(`pairs.csv:%d: field id_b: no document "not-in-the-dataset" in the dataset`, len(rows)+2)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("import-results = %v; want %q", err, want)
	}
	stdout.Reset()
	if err := run(append(args, "-skip-unknown"), &stdout, &stderr); err != nil {
		t.Fatalf("import-results -skip-unknown: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, w := range []string{"(draft) of dataset \"cli\"", fmt.Sprintf("%d removals from pairs.csv (pairs, %d records); keepers by rule", len(rows), len(rows)+1),
		"skipped 1 record naming documents the dataset does not have (e.g. not-in-the-dataset)", "review: every cluster"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout %q; want %q", out, w)
		}
	}
	// -max-rows caps the rows read: the file is refused at the first row past it.
	err = run(append(args, "-skip-unknown", "-max-rows", "2"), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "pairs.csv:4: more than 2 rows, the cap on one results import") {
		t.Errorf("import-results -max-rows 2 = %v; want the file refused at line 4", err)
	}
	if err := run([]string{"import-results", "-db", path, "-dataset", "cli", "-format", "pairs", "-in", in}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "name the configuration production ran") {
		t.Errorf("without a configuration: %v", err)
	}
	if err := run([]string{"import-results", "-db", path, "-dataset", "nope", "-format", "pairs", "-in", in}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), `no dataset named or numbered "nope"`) {
		t.Errorf("unknown dataset: %v", err)
	}
}

// A manifest file with a -config that differs from its rows is refused naming the
// setting (it used to replace the file's own silently); rows of another dataset need
// -other-dataset.
func TestImportResultsManifestConfig(t *testing.T) {
	t.Parallel()
	path, m, rows := configManifest(t)
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := review.WriteCSV(&buf, review.ExportHeader{Manifest: m.ID, Dataset: m.Dataset, Params: m.Params}, rows); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "removals.csv")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := m.Params
	p.Threshold = 0.85
	if m.Params.Threshold == 0.85 {
		p.Threshold = 0.8
	}
	files, err := handoff.Files(handoff.Settings{Params: p}, handoff.JSON)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(cfg, files[0].Body, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"import-results", "-db", path, "-dataset", "cli", "-format", "manifest", "-in", in}
	var stdout, stderr bytes.Buffer
	want := fmt.Sprintf("removals.csv: threshold: the file's rows say %v, the configuration given says %v", m.Params.Threshold, p.Threshold)
	if err := run(append(args, "-config", cfg), &stdout, &stderr); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("-config at %v over the file's %v: %v; want %q", p.Threshold, m.Params.Threshold, err, want)
	}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("without -config: %v", err)
	}

	other := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(other, bytes.ReplaceAll(buf.Bytes(), []byte(","+m.Dataset.Name+","), []byte(",elsewhere,")), 0o644); err != nil {
		t.Fatal(err)
	}
	args[len(args)-1] = other
	if err := run(args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), `other.csv:2: field dataset: its rows are of dataset "elsewhere", not "cli"`) {
		t.Fatalf("rows of another dataset: %v", err)
	}
	if err := run(append(args, "-other-dataset"), &stdout, &stderr); err != nil {
		t.Fatalf("-other-dataset: %v", err)
	}
}

// -config reads settings.json as strictly as the dedup command does: a bad field is
// refused naming the file and the field, and nothing is stored; the same file made
// right imports.
func TestImportResultsConfigBadField(t *testing.T) {
	t.Parallel()
	path, m, rows := configManifest(t)
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := store.Manifests(ctx, 0)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "pairs.csv")
	if err := os.WriteFile(in, []byte("id_a,id_b,score\n"+rows[0].KeeperExtID+","+rows[0].ExtID+",0.97\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := handoff.Files(handoff.Settings{Params: m.Params}, handoff.JSON)
	if err != nil {
		t.Fatal(err)
	}
	good := string(files[0].Body)
	cfg := filepath.Join(dir, "settings.json")
	args := []string{"import-results", "-db", path, "-dataset", "cli", "-format", "pairs", "-in", in, "-config", cfg}
	tests := []struct {
		name, body, want string
	}{
		{"mistyped", strings.Replace(good, fmt.Sprintf(`"bands": %d`, m.Params.Shape.Bands), fmt.Sprintf(`"bands": "%d"`, m.Params.Shape.Bands), 1),
			cfg + ": field bands: want int, got a JSON string"},
		{"unknown", strings.Replace(good, `"cluster_policy"`, `"policy"`, 1), cfg + ": field policy: unknown field"},
		{"missing", without(t, good, "keeper_rule"), cfg + ": field keeper_rule: missing"},
		{"out of range", strings.Replace(good, fmt.Sprintf(`"threshold": %v`, m.Params.Threshold), `"threshold": 1.5`, 1), cfg + ": field threshold: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.body == good {
				t.Fatalf("the test's edit left settings.json unchanged:\n%s", good)
			}
			if err := os.WriteFile(cfg, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			if err := run(args, &stdout, &stderr); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("import-results -config with a bad field = %v; want %q...", err, tt.want)
			}
		})
	}
	store, err = db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	after, err := store.Manifests(ctx, 0)
	store.Close()
	if err != nil || len(after) != len(before) {
		t.Fatalf("manifests after refused imports: %d (%v); want %d", len(after), err, len(before))
	}
	if err := os.WriteFile(cfg, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(args, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "1 removal from pairs.csv") {
		t.Fatalf("import-results with the file made right = %v\n%s", err, stdout.String())
	}
}

// configManifest is the store of signedManifests with its first manifest (the
// configuration production ran) and that manifest's rows.
func configManifest(t *testing.T) (path string, m db.Manifest, rows []review.Row) {
	t.Helper()
	path, configID, _ := signedManifests(t)
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if m, err = store.Manifest(ctx, configID); err != nil {
		t.Fatal(err)
	}
	if rows, err = store.ManifestRows(ctx, configID); err != nil || len(rows) == 0 {
		t.Fatalf("rows of manifest %d: %v, %v", configID, rows, err)
	}
	return path, m, rows
}

// without returns the JSON object doc without its field name.
func without(t *testing.T, doc, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, name)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Without $USER the importer is the system's name for the user; with no name at all the
// command asks for -as instead of recording "cli:".
func TestImportResultsWithoutUSER(t *testing.T) {
	if _, err := cliUser(func(string) string { return "" }, func() (*user.User, error) { return nil, errors.New("unknown userid 4242") }); err == nil ||
		!strings.Contains(err.Error(), "-as: $USER is unset") {
		t.Errorf("no name at all: %v; want -as asked for", err)
	}
	if name, err := cliUser(func(string) string { return "" }, func() (*user.User, error) { return &user.User{Username: "ops"}, nil }); name != "ops" || err != nil {
		t.Errorf("cliUser = %q, %v; want the system's name", name, err)
	}
	me, err := user.Current()
	if err != nil || me.Username == "" {
		t.Skipf("this machine names no user: %v", err)
	}
	t.Setenv("USER", "")
	path, configID, _ := signedManifests(t)
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := store.ManifestRows(ctx, configID)
	if err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	csv.WriteString("id_a,id_b,score\n")
	for _, r := range rows {
		fmt.Fprintf(&csv, "%s,%s,0.97\n", r.KeeperExtID, r.ExtID)
	}
	in := filepath.Join(t.TempDir(), "pairs.csv")
	if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"import-results", "-db", path, "-dataset", "cli", "-format", "pairs", "-in", in, "-manifest", fmt.Sprint(configID)}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var id int64
	fmt.Sscanf(stdout.String(), "manifest %d", &id)
	m, err := store.Manifest(ctx, id)
	store.Close()
	if err != nil || m.Origin == nil {
		t.Fatalf("manifest %d: %v", id, err)
	}
	if m.Origin.ImportedBy != "cli:"+me.Username {
		t.Errorf("imported by %q; want %q", m.Origin.ImportedBy, "cli:"+me.Username)
	}
}

// datatrove's remove_ids folder of a run in two tasks, with the doc_ids folder the
// exported pipeline writes beside it: import-results finds the ids by itself, and
// datatrove's keepers (the members not in a .remove file) hold.
func TestImportResultsDatatroveFolder(t *testing.T) {
	t.Parallel()
	path, m, rows := configManifest(t)
	dir := t.TempDir()
	removeIDs, docIDs := filepath.Join(dir, "minhash", "remove_ids"), filepath.Join(dir, "minhash", "doc_ids")
	for _, d := range []string{removeIDs, docIDs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Task 0 read the keepers, task 1 the documents removed, one cluster per keeper.
	var ids [2][]string
	var clusters, removes [2][]byte
	cluster := map[string]uint32{}
	for _, r := range rows {
		c, ok := cluster[r.KeeperExtID]
		if !ok {
			c = uint32(len(cluster))
			cluster[r.KeeperExtID] = c
			clusters[0] = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(clusters[0], uint32(len(ids[0]))), c)
			ids[0] = append(ids[0], r.KeeperExtID)
		}
		idx := uint32(len(ids[1]))
		clusters[1] = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(clusters[1], idx), c)
		removes[1] = binary.LittleEndian.AppendUint32(removes[1], idx)
		ids[1] = append(ids[1], r.ExtID)
	}
	for task := range 2 {
		var lines strings.Builder
		for _, id := range ids[task] {
			b, _ := json.Marshal(id)
			lines.Write(append(b, '\n'))
		}
		writeTestFile(t, filepath.Join(docIDs, fmt.Sprintf("%06d.ids", task)), lines.String())
		writeTestFile(t, filepath.Join(removeIDs, fmt.Sprintf("%06d.clusters", task)), string(clusters[task]))
		if len(removes[task]) > 0 {
			writeTestFile(t, filepath.Join(removeIDs, fmt.Sprintf("%06d.remove", task)), string(removes[task]))
		}
	}
	var stdout, stderr bytes.Buffer
	args := []string{"import-results", "-db", path, "-dataset", "cli", "-format", "datatrove", "-in", removeIDs, "-manifest", fmt.Sprint(m.ID)}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("import-results: %v\n%s", err, stderr.String())
	}
	want := fmt.Sprintf("%d clusters, %d removals from remove_ids/ (datatrove, %d records); keepers by", len(cluster), len(rows), len(rows)+len(cluster))
	if !strings.Contains(stdout.String(), want) || !strings.Contains(stderr.String(), "document ids from doc_ids") {
		t.Errorf("stdout %q, stderr %q; want %q and the ids folder named", stdout.String(), stderr.String(), want)
	}
	// Without the ids, the indexes of two tasks name nothing.
	if err := os.RemoveAll(docIDs); err != nil {
		t.Fatal(err)
	}
	if err := run(args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "remove_ids: holds the clusters of 2 tasks") {
		t.Errorf("without doc_ids: %v", err)
	}
	if err := run(append(args[:len(args)-2], "-format", "milvus"), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "is a folder: only -format datatrove reads one") {
		t.Errorf("a folder as -format milvus: %v", err)
	}
}

func writeTestFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Commands without an account name who ran them in the audit log even with $USER unset
// (walk 8: an export was logged as "cli:"): the system's name for the user, else the uid.
func TestCLIActorNamesSomeone(t *testing.T) {
	t.Setenv("USER", "")
	if got := cliActor(); !strings.HasPrefix(got, "cli:") || len(got) <= len("cli:") {
		t.Errorf("cliActor() with $USER unset = %q; want cli: and a name", got)
	}
	t.Setenv("USER", "ops")
	if got := cliActor(); got != "cli:ops" {
		t.Errorf("cliActor() = %q; want cli:ops", got)
	}
}
