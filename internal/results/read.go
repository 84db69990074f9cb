package results

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// MaxRowBytes caps the text a results row may carry (a document written out with its
// cluster id); it is read past, not kept.
const MaxRowBytes = 32 << 20

// eachRow reads src as a table (JSONL, CSV or TSV by its name, gzip or zstd by its
// content) and calls fn with each row; a bad row goes to bad.
func eachRow(src Source, opt Options, need []string, bad *badList, fn func(corpus.Record)) (sha string, err error) {
	format, err := corpus.DetectFormat(src.Name)
	if err != nil {
		return "", err
	}
	return eachRowAs(src, format, opt, need, bad, fn)
}

// eachRowAs is eachRow for a file whose format is known, whatever its name.
func eachRowAs(src Source, format corpus.Format, opt Options, need []string, bad *badList, fn func(corpus.Record)) (sha string, err error) {
	if format == corpus.Parquet {
		return "", &InputError{Field: "file", Msg: src.Name + ": this format comes as JSONL, CSV or TSV"}
	}
	hr := newHashing(src.Reader)
	// Rows may carry a document's text (datatrove's and text-dedup's outputs): up to
	// MaxRowBytes of it.
	rd, err := corpus.NewTableReaderLimits(hr, src.Name, format, need, MaxRowBytes, opt.MaxInputBytes)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	rows := 0
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		var re *corpus.RecordError
		if errors.As(err, &re) {
			if err := overCap(&rows, opt, re.Place); err != nil {
				return "", err
			}
			bad.add(re)
			continue
		}
		if err != nil {
			return "", err
		}
		if err := overCap(&rows, opt, rec.Place); err != nil {
			return "", err
		}
		fn(rec)
	}
	io.Copy(io.Discard, hr) // the whole file is hashed, trailing bytes included
	return hr.sum(), nil
}

// overCap counts a row at place and refuses it when it is one past opt.MaxRows.
func overCap(rows *int, opt Options, place corpus.Place) error {
	*rows++
	if opt.MaxRows > 0 && *rows > opt.MaxRows {
		return &RowsError{Place: place, Max: opt.MaxRows}
	}
	return nil
}

// collector gathers what a file says as it streams, each document, pair and
// membership once, so that memory grows with what is distinct in the file and never
// with its rows: a pair given again keeps the higher score, a membership given again
// is the same membership (a keeper if any of its rows says so).
type collector struct {
	r        *Read
	ids      map[string]int32 // document id -> index in r.Docs
	indexes  map[int]int32    // datatrove position -> index in r.Docs
	pairs    map[[2]int32]int32
	members  map[memberKey]int32
	groups   map[string]string // one copy of each group name
	directed bool              // (a, b) and (b, a) are different pairs (a Milvus query and its hit)
}

type memberKey struct {
	doc   int32
	group string
}

func newCollector(r *Read) *collector {
	return &collector{r: r, ids: map[string]int32{}, indexes: map[int]int32{}, pairs: map[[2]int32]int32{},
		members: map[memberKey]int32{}, groups: map[string]string{}, directed: r.Format.SearchBeforeInsert()}
}

// doc returns ref's index in r.Docs, adding it at its first naming.
func (c *collector) doc(ref Ref) int32 {
	if ref.Index >= 0 {
		if i, ok := c.indexes[ref.Index]; ok {
			return i
		}
	} else if i, ok := c.ids[ref.ID]; ok {
		return i
	}
	i := int32(len(c.r.Docs))
	ref.ID = strings.Clone(ref.ID) // not the row it was read from
	c.r.Docs = append(c.r.Docs, ref)
	if ref.Index >= 0 {
		c.indexes[ref.Index] = i
	} else {
		c.ids[ref.ID] = i
	}
	return i
}

// pair records a and b at score.
func (c *collector) pair(a, b Ref, score float64) {
	x, y := c.doc(a), c.doc(b)
	if !c.directed && y < x {
		x, y = y, x
	}
	k := [2]int32{x, y}
	if i, ok := c.pairs[k]; ok {
		p := &c.r.Pairs[i]
		p.Rows++
		if score > p.Score || math.IsNaN(p.Score) {
			p.Score = score
		}
		return
	}
	c.pairs[k] = int32(len(c.r.Pairs))
	c.r.Pairs = append(c.r.Pairs, Pair{A: int(x), B: int(y), Score: score, Rows: 1})
}

// member records doc in group.
func (c *collector) member(doc Ref, group string, keeper bool, size int) {
	d := c.doc(doc)
	g, ok := c.groups[group]
	if !ok {
		g = strings.Clone(group)
		c.groups[g] = g
	}
	k := memberKey{d, g}
	if i, ok := c.members[k]; ok {
		m := &c.r.Members[i]
		m.Rows++
		m.Keeper = m.Keeper || keeper
		if size > 0 {
			m.Size = size
		}
		return
	}
	c.members[k] = int32(len(c.r.Members))
	c.r.Members = append(c.r.Members, Member{Doc: int(d), Group: g, Keeper: keeper, Size: size, Place: doc.Place, Rows: 1})
}

// field returns the value of the first of names present in m, matching names without
// case (CSV headers come lowercased), and the name found.
func field(m map[string]any, names ...string) (any, string, bool) {
	for _, n := range names {
		if v, ok := m[n]; ok {
			return v, n, true
		}
	}
	for _, n := range names {
		for k, v := range m {
			if strings.EqualFold(k, n) {
				return v, k, true
			}
		}
	}
	return nil, names[0], false
}

func recErr(rec corpus.Record, f, format string, args ...any) *corpus.RecordError {
	return &corpus.RecordError{Place: rec.Place, Field: f, Msg: fmt.Sprintf(format, args...), Record: rec.Raw}
}

// readRef reads a document id from the row's field names[0] (or another of names).
func readRef(rec corpus.Record, names ...string) (Ref, *corpus.RecordError) {
	v, name, _ := field(rec.Meta, names...)
	id, err := idValue(v)
	if err != nil {
		return Ref{}, recErr(rec, name, "%v", err)
	}
	return Ref{ID: id, Index: -1, Place: rec.Place, Field: name}, nil
}

// readPairs reads a table of id_a, id_b, score.
func readPairs(src Source, opt Options) (*Read, error) {
	r := &Read{Format: Pairs, File: src.Name}
	c := newCollector(r)
	bad := &badList{}
	sha, err := eachRow(src, opt, nil, bad, func(rec corpus.Record) {
		r.Records++
		a, e := readRef(rec, "id_a")
		if e != nil {
			bad.add(e)
			return
		}
		b, e := readRef(rec, "id_b")
		if e != nil {
			bad.add(e)
			return
		}
		v, name, _ := field(rec.Meta, "score")
		s, err := scoreValue(v)
		if err != nil {
			bad.add(recErr(rec, name, "%v", err))
			return
		}
		if a.ID == b.ID {
			bad.add(recErr(rec, "id_b", "the same document as id_a"))
			return
		}
		c.pair(a, b, s)
	})
	if err != nil {
		return nil, err
	}
	r.SHA256 = sha
	return finish(r, bad)
}

// dumpShape names the fields of a search-before-insert dump: each line a document and
// the list of stored documents it matched, each with its score.
type dumpShape struct {
	format      Format
	list, score string // "hits", "distance" (Milvus); "matches", "jaccard" (datasketch)
	alt         string // a score field read where score is missing ("score", pymilvus's other name)
	scoreHint   string // said after a bad score
	notJSON     string // said of a file that is not JSON lines
}

var milvusDump = dumpShape{format: Milvus, list: "hits", score: "distance", alt: "score", scoreHint: " (MHJACCARD answers a similarity)",
	notJSON: "a Milvus dump is JSON lines {\"id\", \"hits\": [{\"id\", \"distance\"}]} (.jsonl, plain, gzip or zstd); a table of id_a,id_b,score is -format pairs"}

var datasketchDump = dumpShape{format: Datasketch, list: "matches", score: "jaccard",
	notJSON: "the datasketch program writes JSON lines {\"id\", \"matches\": [{\"id\", \"jaccard\"}]} (.jsonl, plain, gzip or zstd); a table of id_a,id_b,score is -format pairs"}

// readMilvus reads the search dump: {"id": query, "hits": [{"id": hit, "distance": s}]}
// per line (pymilvus's hit dictionaries; "score" is read where "distance" is missing).
func readMilvus(src Source, opt Options) (*Read, error) {
	// A table (CSV, TSV, Parquet) is not a dump: say so once, not "field id: missing" per line.
	if f, err := corpus.DetectFormat(src.Name); err == nil && f != corpus.JSONL {
		return nil, &InputError{Field: "file", Msg: src.Name + ":1: not JSON: " + milvusDump.notJSON}
	}
	return readDump(src, corpus.JSONL, opt, milvusDump)
}

// readDatasketch reads what the handed-off datasketch program writes: {"id": reported,
// "matches": [{"id": stored, "jaccard": s}]} per line; or the tab-separated lines of the
// program exported before, told by their content.
func readDatasketch(src Source, opt Options) (*Read, error) {
	if f, err := corpus.DetectFormat(src.Name); err == nil && f == corpus.JSONL {
		return readDump(src, corpus.JSONL, opt, datasketchDump)
	}
	br := bufio.NewReader(src.Reader)
	head, _ := br.Peek(512)
	src.Reader = br
	if len(head) > 0 && (head[0] == '{' || bytes.HasPrefix(head, []byte{0x1f, 0x8b}) || bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd})) {
		// JSON lines under another name (matches.out), plain or compressed.
		return readDump(src, corpus.JSONL, opt, datasketchDump)
	}
	return readDatasketchTSV(src, opt)
}

// readDatasketchTSV reads the lines of the datasketch program exported before issue 28:
// id, "duplicate of", the stored document, "jaccard estimate", the score, tab-separated
// (the best match of each reported document only).
func readDatasketchTSV(src Source, opt Options) (*Read, error) {
	r := &Read{Format: Datasketch, File: src.Name}
	c := newCollector(r)
	bad := &badList{}
	hr := newHashing(src.Reader)
	sc := bufio.NewScanner(hr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line, rows := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		r.Records++
		place := corpus.Place{File: src.Name, Line: line}
		if err := overCap(&rows, opt, place); err != nil {
			return nil, err
		}
		f := strings.Split(text, "\t")
		if len(f) != 5 || f[1] != "duplicate of" || f[3] != "jaccard estimate" {
			bad.add(&corpus.RecordError{Place: place, Msg: fmt.Sprintf("want JSON lines {\"id\", \"matches\": [...]} or the tab-separated line "+
				"id, \"duplicate of\", id, \"jaccard estimate\", score of the datasketch program; got %s", review.Quantity(len(f), "field", "fields"))})
			if bad.total >= MaxListed {
				break
			}
			continue
		}
		a := Ref{ID: f[0], Index: -1, Place: place, Field: "id"}
		b := Ref{ID: f[2], Index: -1, Place: place, Field: "duplicate of"}
		switch {
		case a.ID == "":
			bad.add(&corpus.RecordError{Place: place, Field: "id", Msg: "empty"})
			continue
		case b.ID == "":
			bad.add(&corpus.RecordError{Place: place, Field: "duplicate of", Msg: "empty"})
			continue
		case a.ID == b.ID:
			bad.add(&corpus.RecordError{Place: place, Field: "duplicate of", Msg: "the reported document itself"})
			continue
		}
		s, err := scoreValue(f[4])
		if err != nil {
			bad.add(&corpus.RecordError{Place: place, Field: "jaccard estimate", Msg: err.Error()})
			continue
		}
		c.pair(a, b, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", src.Name, line+1, err)
	}
	io.Copy(io.Discard, hr)
	r.SHA256 = hr.sum()
	r.KeeperGiven = searchKeepers(r.Pairs)
	return finish(r, bad)
}

// readDump reads a search-before-insert dump of shape d.
func readDump(src Source, format corpus.Format, opt Options, d dumpShape) (*Read, error) {
	r := &Read{Format: d.format, File: src.Name}
	c := newCollector(r)
	bad := &badList{}
	sha, err := eachRowAs(src, format, opt, nil, bad, func(rec corpus.Record) {
		r.Records++
		q, e := readRef(rec, "id")
		if e != nil {
			bad.add(e)
			return
		}
		hv, _, ok := field(rec.Meta, d.list)
		hits, isList := hv.([]any)
		if !ok || !isList {
			bad.add(recErr(rec, d.list, "want a list of {\"id\", \"%s\"} objects", d.score))
			return
		}
		type hit struct {
			ref   Ref
			score float64
		}
		var found []hit // the line's hits, recorded once all are good
		for i, h := range hits {
			name := d.list + "[" + strconv.Itoa(i) + "]"
			hm, isMap := h.(map[string]any)
			if !isMap {
				bad.add(recErr(rec, name, "want an object {\"id\", \"%s\"}", d.score))
				return
			}
			id, err := idValue(hm["id"])
			if err != nil {
				bad.add(recErr(rec, name+".id", "%v", err))
				return
			}
			sv, sname := hm[d.score], "."+d.score
			if sv == nil && d.alt != "" {
				sv, sname = hm[d.alt], "."+d.alt
			}
			s, err := scoreValue(sv)
			if err != nil {
				bad.add(recErr(rec, name+sname, "%v%s", err, d.scoreHint))
				return
			}
			if id == q.ID {
				bad.add(recErr(rec, name+".id", "the query document itself"))
				return
			}
			found = append(found, hit{Ref{ID: id, Index: -1, Place: rec.Place, Field: name + ".id"}, s})
		}
		for _, h := range found {
			c.pair(q, h.ref, h.score)
		}
	})
	if err != nil {
		return nil, err
	}
	r.SHA256 = sha
	r.KeeperGiven = searchKeepers(r.Pairs)
	return finish(r, bad)
}

// searchKeepers reports whether pairs read as a search before insert name the keepers:
// such a search never stores a document it found a duplicate of, so no query is also a
// hit, and then the hits are the documents the engine kept. A dump of a search over
// documents all stored (each pair both ways) names no keepers.
func searchKeepers(pairs []Pair) bool {
	query := map[int]bool{}
	for _, p := range pairs {
		query[p.A] = true
	}
	return !slices.ContainsFunc(pairs, func(p Pair) bool { return query[p.B] })
}

// readDatatroveJSONL reads documents written by datatrove's JsonlWriter after
// MinhashDedupFilter(load_cluster_ids=True): {"id", "text", "metadata":
// {"minhash_cluster_id": c, "minhash_cluster_size": n}}. A document in no cluster has
// cluster id -1 (or none) and is left out. With removed (the exclusion writer's output
// beside the filter's), the documents of src are what datatrove kept and those of
// removed what it removed: its own keepers.
func readDatatroveJSONL(src, removed Source, opt Options) (*Read, error) {
	r := &Read{Format: Datatrove, File: src.Name, KeeperGiven: removed.Reader != nil}
	c := newCollector(r)
	bad := &badList{}
	withID := 0 // records with a cluster id
	read := func(src Source, kept bool) (string, error) {
		return eachRow(src, opt, nil, bad, func(rec corpus.Record) {
			r.Records++
			meta := rec.Meta
			where := ""
			if m, ok := rec.Meta["metadata"].(map[string]any); ok {
				meta, where = m, "metadata."
			}
			cv, cname, ok := field(meta, "minhash_cluster_id", "minhash_cluster")
			if !ok {
				// Older datatrove sets the key only on documents in a cluster.
				return
			}
			withID++
			group, _, err := groupValue(cv)
			if err != nil {
				bad.add(recErr(rec, where+cname, "%v", err))
				return
			}
			if _, err := strconv.ParseInt(group, 10, 64); err != nil && group != "" {
				// datatrove's cluster ids are integers (-1: in no cluster).
				bad.add(recErr(rec, where+cname, "%q is not a cluster id: datatrove writes a whole number (-1 for none)", group))
				return
			}
			if group == "-1" || group == "" {
				return
			}
			ref, e := readRef(rec, opt.IDField)
			if e != nil {
				bad.add(e)
				return
			}
			size := 0
			if sv, sname, ok := field(meta, "minhash_cluster_size"); ok {
				n, err := idValue(sv)
				s, err2 := strconv.Atoi(n)
				if err != nil || err2 != nil || s < 1 {
					bad.add(recErr(rec, where+sname, "want a whole number of documents"))
					return
				}
				size = s
			}
			c.member(ref, group, kept, size)
		})
	}
	sha, err := read(src, removed.Reader != nil)
	if err != nil {
		return nil, err
	}
	r.SHA256 = sha
	if removed.Reader != nil {
		if _, err := read(removed, false); err != nil {
			return nil, err
		}
	}
	if withID == 0 && r.Records > 0 && bad.total == 0 {
		return nil, &InputError{Field: "file", Msg: src.Name + ": no document has metadata.minhash_cluster_id: run MinhashDedupCluster with save_cluster_id=True " +
			"and MinhashDedupFilter with load_cluster_ids=True, and import what the filter writes"}
	}
	return finish(r, bad)
}

// readDatatroveClusters reads a .clusters file of MinhashDedupCluster (save_cluster_id):
// little-endian uint32 pairs (document index in its rank's input, cluster id), and the
// .remove file beside it (little-endian uint32 indexes of the documents removed), whose
// complement in each cluster is the document datatrove kept.
func readDatatroveClusters(src, remove Source, opt Options) (*Read, error) {
	r := &Read{Format: Datatrove, File: src.Name}
	c := newCollector(r)
	bad := &badList{}
	hr := newHashing(src.Reader)
	recs, err := readClusterRecords(hr, src.Name, bad)
	if err != nil {
		return nil, err
	}
	r.SHA256 = hr.sum()
	rows := 0
	for _, rec := range recs {
		r.Records++
		if err := overCap(&rows, opt, rec.place); err != nil {
			return nil, err
		}
		c.member(Ref{Index: int(rec.doc), Place: rec.place, Field: "document"}, strconv.FormatUint(uint64(rec.cluster), 10), false, 0)
	}
	if remove.Reader != nil {
		removed, err := readRemoveRecords(remove.Reader, remove.Name, bad)
		if err != nil {
			return nil, err
		}
		for i := range r.Members {
			r.Members[i].Keeper = !removed[uint32(r.Docs[r.Members[i].Doc].Index)]
		}
		r.KeeperGiven = true
	}
	return finish(r, bad)
}

// clusterRecord is one record of a .clusters file: a document of one task's input (its
// index there) and its cluster.
type clusterRecord struct {
	doc, cluster uint32
	place        corpus.Place
}

// readClusterRecords reads a .clusters file: 8-byte records, a little-endian uint32
// document index and a uint32 cluster id. A record cut short or an index past int32 is
// a bad record.
func readClusterRecords(r io.Reader, name string, bad *badList) ([]clusterRecord, error) {
	br := bufio.NewReader(r)
	var out []clusterRecord
	var buf [8]byte
	for off := 0; ; off += 8 {
		n, err := io.ReadFull(br, buf[:])
		if err == io.EOF {
			return out, nil
		}
		place := corpus.Place{File: name, Line: off/8 + 1}
		if err == io.ErrUnexpectedEOF {
			bad.add(&corpus.RecordError{Place: place,
				Msg: fmt.Sprintf("ends %s into a record at byte %d: a .clusters file holds 8-byte records (uint32 document index, uint32 cluster id)",
					review.Quantity(n, "byte", "bytes"), off)})
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		idx := binary.LittleEndian.Uint32(buf[:4])
		if idx > math.MaxInt32 {
			bad.add(&corpus.RecordError{Place: place, Field: "document", Msg: fmt.Sprintf("index %d is not a document of one task's input", idx)})
			continue
		}
		out = append(out, clusterRecord{doc: idx, cluster: binary.LittleEndian.Uint32(buf[4:]), place: place})
	}
}

// readRemoveRecords reads a .remove file: little-endian uint32 indexes of the documents
// removed.
func readRemoveRecords(r io.Reader, name string, bad *badList) (map[uint32]bool, error) {
	removed := map[uint32]bool{}
	br := bufio.NewReader(r)
	var b4 [4]byte
	for off := 0; ; off += 4 {
		n, err := io.ReadFull(br, b4[:])
		if err == io.EOF {
			return removed, nil
		}
		if err == io.ErrUnexpectedEOF {
			bad.add(&corpus.RecordError{Place: corpus.Place{File: name, Line: off/4 + 1},
				Msg: fmt.Sprintf("ends %s into a record at byte %d: a .remove file holds uint32 document indexes", review.Quantity(n, "byte", "bytes"), off)})
			return removed, nil
		}
		if err != nil {
			return nil, err
		}
		removed[binary.LittleEndian.Uint32(b4[:])] = true
	}
}

// readTextDedup reads text-dedup's output kept with its cluster and index columns
// (skip_filtering, keep_cluster_column, keep_index_column): a row's cluster is the index
// of the row its cluster keeps, so the row whose index equals its cluster is the keeper.
// Without the index column, keepers come from the rule.
func readTextDedup(src Source, opt Options) (*Read, error) {
	clusterNames := []string{"__CLUSTER__", "__cluster__"}
	if opt.ClusterField != "" {
		clusterNames = []string{opt.ClusterField}
	}
	indexNames := []string{"__INDEX__", "__index__"}
	if opt.IndexField != "" {
		indexNames = []string{opt.IndexField}
	}
	r := &Read{Format: TextDedup, File: src.Name, KeeperGiven: true}
	c := newCollector(r)
	bad := &badList{}
	row := func(rec corpus.Record) {
		r.Records++
		cv, cname, ok := field(rec.Meta, clusterNames...)
		if !ok {
			bad.add(recErr(rec, cname, "no cluster column: save text-dedup's output with keep_cluster_column (and skip_filtering, so removed rows stay), or name the column"))
			return
		}
		group, ok, err := groupValue(cv)
		if err != nil || !ok {
			bad.add(recErr(rec, cname, "want a cluster id"))
			return
		}
		ref, e := readRef(rec, opt.IDField)
		if e != nil {
			bad.add(e)
			return
		}
		keeper := false
		if iv, _, ok := field(rec.Meta, indexNames...); ok {
			index, _, _ := groupValue(iv)
			keeper = index == group
		} else {
			r.KeeperGiven = false
		}
		c.member(ref, group, keeper, 0)
	}
	format, err := corpus.DetectFormat(src.Name)
	if err != nil {
		return nil, err
	}
	if format != corpus.Parquet {
		sha, err := eachRow(src, opt, nil, bad, row)
		if err != nil {
			return nil, err
		}
		r.SHA256 = sha
	} else {
		if err := eachParquetRow(src, opt, append(clusterNames, indexNames...), bad, row); err != nil {
			return nil, err
		}
		hr := newHashing(io.NewSectionReader(src.At, 0, src.Size))
		if _, err := io.Copy(io.Discard, hr); err != nil {
			return nil, err
		}
		r.SHA256 = hr.sum()
	}
	r.Members = groupsOfTwoOrMore(r.Members)
	if len(r.Members) == 0 && bad.total == 0 {
		return nil, &InputError{Field: "file", Msg: src.Name + ": every row is in a cluster of its own: text-dedup's filtered output keeps one row per cluster; " +
			"save it with skip_filtering and keep_cluster_column (and keep_index_column for its keepers)"}
	}
	return finish(r, bad)
}

// eachParquetRow reads src as Parquet with corpus's document reader (the text column is
// read and dropped: the reader wants one), the id column and the columns named.
func eachParquetRow(src Source, opt Options, cols []string, bad *badList, fn func(corpus.Record)) error {
	if src.At == nil {
		return &InputError{Field: "file", Msg: src.Name + ": Parquet needs a file, not a stream"}
	}
	tmp, err := corpus.OpenParquet(src.At, src.Size, src.Name, corpus.Options{IDField: opt.IDField, TextField: opt.TextField,
		MetaFields: cols, MaxBytes: MaxRowBytes, MaxInputBytes: opt.MaxInputBytes})
	if err != nil {
		return err
	}
	defer tmp.Close()
	rows := 0
	for {
		rec, err := tmp.Next()
		if err == io.EOF {
			return nil
		}
		var re *corpus.RecordError
		if errors.As(err, &re) {
			if err := overCap(&rows, opt, re.Place); err != nil {
				return err
			}
			bad.add(re)
			continue
		}
		if err != nil {
			return err
		}
		if err := overCap(&rows, opt, rec.Place); err != nil {
			return err
		}
		rec.Meta[opt.IDField] = rec.ID
		fn(rec)
	}
}

// groupsOfTwoOrMore drops the members alone in their group.
func groupsOfTwoOrMore(ms []Member) []Member {
	n := map[string]int{}
	for _, m := range ms {
		n[m.Group]++
	}
	out := ms[:0]
	for _, m := range ms {
		if n[m.Group] > 1 {
			out = append(out, m)
		}
	}
	return out
}

// readManifest reads removals.jsonl or removals.csv (review.CSVColumns): each row a
// removed document, its keeper and the cluster; every row repeats the configuration.
func readManifest(src Source, opt Options) (*Read, error) {
	r := &Read{Format: Manifest, File: src.Name, KeeperGiven: true}
	c := newCollector(r)
	bad := &badList{}
	var first string
	keepers := map[string]bool{}
	sha, err := eachRow(src, opt, []string{"ext_id", "keeper_ext_id", "cluster_id"}, bad, func(rec corpus.Record) {
		r.Records++
		for k, v := range rec.Meta { // cells written through review.SafeCell
			if s, ok := v.(string); ok && len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(s[1])) {
				rec.Meta[k] = s[1:]
			}
		}
		doc, e := readRef(rec, "ext_id")
		if e != nil {
			bad.add(e)
			return
		}
		keeper, e := readRef(rec, "keeper_ext_id")
		if e != nil {
			bad.add(e)
			return
		}
		group, ok, err := groupValue(rec.Meta["cluster_id"])
		if err != nil || !ok {
			bad.add(recErr(rec, "cluster_id", "want a cluster id"))
			return
		}
		if d, _, _ := field(rec.Meta, "decision"); d == "excluded" {
			return // a reviewer kept it: not a removal
		}
		p, line, e := manifestParams(rec)
		if e != nil {
			bad.add(e)
			return
		}
		if name, _, _ := field(rec.Meta, "dataset"); r.Dataset == "" && name != nil && name != "" {
			r.Dataset, r.DatasetAt = fmt.Sprint(name), rec.Place
		}
		if first == "" {
			first = line
			r.Params = &p
		} else if line != first {
			bad.add(recErr(rec, "spec", "a configuration other than the first row's (%s)", first))
			return
		}
		score := math.NaN()
		for _, name := range []string{"similarity_exact", "similarity_estimate"} {
			if v, _, ok := field(rec.Meta, name); ok && v != "" && v != nil {
				s, err := scoreValue(v)
				if err != nil {
					bad.add(recErr(rec, name, "%v", err))
					return
				}
				if score = s; p.Verification == review.Exact || name == "similarity_estimate" {
					break
				}
			}
		}
		c.member(doc, group, false, 0)
		if !keepers[group] {
			keepers[strings.Clone(group)] = true
			c.member(keeper, group, true, 0)
		}
		c.pair(keeper, doc, score)
	})
	if err != nil {
		return nil, err
	}
	r.SHA256 = sha
	return finish(r, bad)
}

// manifestParams reads the configuration a manifest row repeats, and its canonical line.
func manifestParams(rec corpus.Record) (review.Params, string, *corpus.RecordError) {
	str := func(name string) string {
		v, _, _ := field(rec.Meta, name)
		switch v := v.(type) {
		case string:
			return v
		case nil:
			return ""
		default:
			return fmt.Sprint(v)
		}
	}
	num := func(name string) (float64, *corpus.RecordError) {
		f, err := strconv.ParseFloat(str(name), 64)
		if err != nil {
			return 0, recErr(rec, name, "want a number")
		}
		return f, nil
	}
	bands, e := num("bands")
	if e != nil {
		return review.Params{}, "", e
	}
	rows, e := num("rows")
	if e != nil {
		return review.Params{}, "", e
	}
	threshold, e := num("threshold")
	if e != nil {
		return review.Params{}, "", e
	}
	j := fmt.Sprintf(`{"spec":%q,"bands":%d,"rows":%d,"threshold":%v,"verification":%q,"policy":%q,"keeper_rule":%q}`,
		str("spec"), int(bands), int(rows), threshold, str("verification"), str("policy"), str("keeper_rule"))
	var p review.Params
	if err := p.UnmarshalJSON([]byte(j)); err != nil {
		return review.Params{}, "", recErr(rec, "spec", "not a configuration this studio reads: %v", err)
	}
	if err := p.Validate(); err != nil {
		return review.Params{}, "", recErr(rec, "spec", "%v", err)
	}
	return p, j, nil
}
