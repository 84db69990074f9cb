package results

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Folder is the output folder of datatrove's MinhashDedupCluster (remove_ids in
// datatrove's example): for each task of the signature stage whose documents have
// duplicates, NNNNNN.clusters (written with save_cluster_id=True: uint32 pairs, document
// index and cluster id) and NNNNNN.remove (uint32 indexes of the documents removed), NNNNNN
// the task's rank; .sizes files are not read. Cluster ids count over the whole run, so a
// cluster may span tasks.
//
// A document is named there by its index in its task's input, not by its id. IDs is the
// folder of NNNNNN.ids files the exported pipeline writes beside it (doc_ids): one JSON
// string per line, the id of each document the task read, in the order it read them.
// Without IDs, a folder of one task (rank 0) is read with its indexes taken in the
// dataset's import order, as a single .clusters file is.
type Folder struct {
	Name    string // the folder as named to the user, for errors: "remove_ids"
	Dir     fs.FS
	IDsName string // "doc_ids"
	IDs     fs.FS  // nil: none
	// Options bound the read (MaxRows: cluster records over all tasks).
	Options Options
}

// datatroveSentinel is the rank datatrove writes for documents of an index
// (MinhashDedupBuckets' index_folder): not documents of this run's input.
const datatroveSentinel = 1<<32 - 1

var datatroveFile = regexp.MustCompile(`^(\d+)\.(clusters|remove|ids)$`)

// ReadDatatroveFolder reads f: every task's .clusters file, with its .remove file for
// the keepers datatrove chose (a task with cluster members and no .remove file removed
// none of them), and each document resolved through the task's .ids file. Bad records
// are a *BadInputError naming file, record and field; a folder that cannot be read as a
// whole is an *InputError.
func ReadDatatroveFolder(f Folder) (*Read, error) {
	name := strings.TrimSuffix(f.Name, "/")
	fail := func(format string, args ...any) (*Read, error) {
		return nil, &InputError{Field: "file", Msg: name + ": " + fmt.Sprintf(format, args...)}
	}
	entries, err := fs.ReadDir(f.Dir, ".")
	if err != nil {
		return nil, fmt.Errorf("read folder %s: %w", name, err)
	}
	clusters, removes := map[uint32]string{}, map[uint32]string{}
	for _, e := range entries {
		m := datatroveFile.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		rank, err := strconv.ParseUint(m[1], 10, 32)
		if err != nil || rank == datatroveSentinel {
			continue // an index's documents: not this run's input
		}
		switch m[2] {
		case "clusters":
			clusters[uint32(rank)] = e.Name()
		case "remove":
			removes[uint32(rank)] = e.Name()
		}
	}
	if len(clusters) == 0 {
		if len(removes) > 0 {
			return fail("%s and no .clusters file: a .remove file lists the documents to remove but not what each duplicates; "+
				"run MinhashDedupCluster with save_cluster_id=True (the exported pipeline does) and import the folder again", review.Quantity(len(removes), ".remove file", ".remove files"))
		}
		return fail("no NNNNNN.clusters file in it: import the output folder of MinhashDedupCluster(save_cluster_id=True) (remove_ids)")
	}
	ranks := make([]uint32, 0, len(clusters))
	for r := range clusters {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	if f.IDs == nil && (len(ranks) > 1 || ranks[0] != 0) {
		return fail("holds the clusters of %s (%s, ...): a document is named there by its index in its task's input, so the import needs "+
			"the ids each task read, which the exported pipeline writes to doc_ids/ beside remove_ids/ (give that folder as -ids)", review.Quantity(len(ranks), "task", "tasks"), clusters[ranks[0]])
	}

	r := &Read{Format: Datatrove, File: name + "/", KeeperGiven: len(removes) > 0}
	c := newCollector(r)
	bad := &badList{}
	rows := 0
	sum := sha256.New()
	// open hashes each file it reads under its folder and name, in the order read
	// (ranks in order; clusters, remove, ids), so the same folder has the same SHA-256.
	open := func(dir fs.FS, dirName, file string) (io.Reader, func() error, error) {
		fh, err := dir.Open(file)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(sum, "%s\x00", path.Join(dirName, file))
		return io.TeeReader(fh, sum), fh.Close, nil
	}
	for _, rank := range ranks {
		file := clusters[rank]
		rd, closeFn, err := open(f.Dir, name, file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path.Join(name, file), err)
		}
		recs, err := readClusterRecords(rd, path.Join(name, file), bad)
		closeFn()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path.Join(name, file), err)
		}
		r.Records += len(recs)
		var removed map[uint32]bool
		if rm, ok := removes[rank]; ok {
			rd, closeFn, err := open(f.Dir, name, rm)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", path.Join(name, rm), err)
			}
			removed, err = readRemoveRecords(rd, path.Join(name, rm), bad)
			closeFn()
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", path.Join(name, rm), err)
			}
		}
		var ids []string
		if f.IDs != nil {
			idsFile := fmt.Sprintf("%06d.ids", rank)
			rd, closeFn, err := open(f.IDs, f.IDsName, idsFile)
			if errors.Is(err, fs.ErrNotExist) {
				return fail("%s has no %s: the ids task %d read are missing (the exported pipeline writes one per task in its signature stage)",
					strings.TrimSuffix(f.IDsName, "/"), idsFile, rank)
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", path.Join(f.IDsName, idsFile), err)
			}
			ids, err = readIDs(rd, path.Join(f.IDsName, idsFile), bad)
			closeFn()
			if err != nil {
				return nil, err
			}
		}
		for _, rec := range recs {
			if err := overCap(&rows, f.Options, rec.place); err != nil {
				return nil, err
			}
			ref := Ref{Index: int(rec.doc), Place: rec.place, Field: "document"}
			if f.IDs != nil {
				if int(rec.doc) >= len(ids) {
					bad.add(&corpus.RecordError{Place: rec.place, Field: "document", Msg: fmt.Sprintf("index %d: task %d read %s by %s",
						rec.doc, rank, documents(len(ids)), path.Join(f.IDsName, fmt.Sprintf("%06d.ids", rank)))})
					continue
				}
				ref = Ref{ID: ids[rec.doc], Index: -1, Place: rec.place, Field: "document"}
			}
			c.member(ref, strconv.FormatUint(uint64(rec.cluster), 10), r.KeeperGiven && !removed[rec.doc], 0)
		}
	}
	r.SHA256 = hex.EncodeToString(sum.Sum(nil))
	return finish(r, bad)
}

// readIDs reads an .ids file: one JSON value per line, a document's id (a string, or a
// whole number read as documents' ids are).
func readIDs(r io.Reader, name string, bad *badList) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ids []string
	for line := 1; sc.Scan(); line++ {
		var v any
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		err := dec.Decode(&v)
		id, idErr := idValue(v)
		if err != nil || idErr != nil {
			msg := "want a JSON string, the id of the document the task read"
			if err == nil {
				msg = idErr.Error()
			}
			bad.add(&corpus.RecordError{Place: corpus.Place{File: name, Line: line}, Field: "id", Msg: msg})
		}
		ids = append(ids, id) // kept in place, so later lines keep their index
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return ids, nil
}
