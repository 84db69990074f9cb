package bulk

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// ClusterLine is one line of clusters.jsonl: a cluster with its keeper, members and
// removals, documents named by id and by index (0-based position among the documents
// read, rejects not counted).
type ClusterLine struct {
	Cluster        int64         `json:"cluster_id"` // 1-based, the cluster_id of the removal rows
	Keeper         string        `json:"keeper_ext_id"`
	KeeperIndex    int           `json:"keeper_index"`
	Size           int           `json:"size"`
	Chained        bool          `json:"chained"`
	ChainedMembers int           `json:"chained_members"`
	WeakestLink    float64       `json:"weakest_link"`
	Members        []string      `json:"members"`
	Removed        []RemovedLine `json:"removed"`
}

// RemovedLine is a removal in a ClusterLine: Sim is the similarity to the keeper under
// the configuration's verification.
type RemovedLine struct {
	ExtID  string  `json:"ext_id"`
	Index  int     `json:"index"`
	Reason string  `json:"reason"`
	Sim    float64 `json:"similarity"`
}

// cluster is stage 6: the verified pairs clustered under the configuration's policy
// and keeper rule, written to clusters.jsonl in cluster order (by smallest member).
func (r *run) cluster(ctx context.Context) error {
	n := r.sum.Docs
	docs := make([]cluster.Doc, n)
	ids := make([]string, n)
	err := r.eachDoc(func(i int, d *docLine) error {
		docs[i] = cluster.Doc{Len: d.Len, Source: d.Source, Lang: d.Lang, Date: cluster.ParseDate(d.Date)}
		ids[i] = d.ID
		return nil
	})
	if err != nil {
		return err
	}
	src, groups, err := r.openSims()
	if err != nil {
		return err
	}
	defer src.Close()
	edges, err := r.readEdges()
	if err != nil {
		return err
	}
	v := r.opt.Params.Verification
	pool := sync.Pool{New: func() any { return new(scratch) }}
	var simErr atomic.Value
	sim := func(a, b int) float64 {
		sc := pool.Get().(*scratch)
		defer pool.Put(sc)
		s, err := src.sim(v, a, b, sc)
		if err != nil {
			simErr.CompareAndSwap(nil, err)
			return 0
		}
		return s
	}
	r.report(0, 0, "clusters", false, false)
	g, err := cluster.NewGraph(cluster.Input{Docs: docs, Exact: groups, Edges: edges, Sim: sim})
	if err != nil {
		return err
	}
	edges = nil
	res, err := g.Cluster(r.opt.Params.Config())
	if err != nil {
		return err
	}
	if e := simErr.Load(); e != nil {
		return e.(error)
	}
	if m := src.missing.Load(); m > 0 {
		return fmt.Errorf("%d shingle sets missing for pairs clustering asked about", m)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.sum.Clusters, r.sum.Removed, r.sum.RemovedExact = len(res.Clusters), res.Removed, res.RemovedExact
	r.sum.Chained, r.sum.Limited, r.sum.SimCalls = res.Chained, res.Limited, res.SimCalls
	return writeFile(r.path(ClustersJSONL), func(w *bufio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for i, c := range res.Clusters {
			cl := ClusterLine{Cluster: int64(i + 1), Keeper: ids[c.Keeper], KeeperIndex: c.Keeper, Size: len(c.Members),
				Chained: c.Diag.Chained, ChainedMembers: c.Diag.ChainedMembers, WeakestLink: c.Diag.WeakestSim,
				Members: make([]string, len(c.Members)), Removed: make([]RemovedLine, len(c.Removed))}
			for j, m := range c.Members {
				cl.Members[j] = ids[m]
			}
			for j, rm := range c.Removed {
				cl.Removed[j] = RemovedLine{ExtID: ids[rm.Doc], Index: rm.Doc, Reason: string(rm.Reason), Sim: rm.Sim}
			}
			if err := enc.Encode(cl); err != nil {
				return err
			}
			if i%4096 == 0 {
				r.report(int64(i), int64(len(res.Clusters)), "clusters", false, false)
			}
		}
		return nil
	})
}

func (r *run) readEdges() ([]cluster.Edge, error) {
	f, err := os.Open(r.path(edgesFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	edges := make([]cluster.Edge, 0, r.sum.Candidates)
	br := bufio.NewReaderSize(f, 1<<20)
	var b [16]byte
	for {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			if err == io.EOF {
				return edges, nil
			}
			return nil, fmt.Errorf("%s: %w", edgesFile, err)
		}
		edges = append(edges, cluster.Edge{A: int(binary.LittleEndian.Uint32(b[:])), B: int(binary.LittleEndian.Uint32(b[4:])),
			Sim: math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))})
	}
}

// manifest is stage 7: the removals in the review format (removals.csv and
// removals.jsonl, as a manifest export writes them: every removal with its keeper,
// cluster, reason, MinHash estimate and exact Jaccard to the keeper, content hash, the
// parameters and the versioned representation; decision "proposed", manifest 0, the
// corpus as dataset version 0), and summary.json.
func (r *run) manifest(ctx context.Context) error {
	n := r.sum.Docs
	ids := make([]string, n)
	hashes := make([][32]byte, n)
	err := r.eachDoc(func(i int, d *docLine) error {
		ids[i] = d.ID
		if _, err := hex.Decode(hashes[i][:], []byte(d.Hash)); err != nil {
			return fmt.Errorf("%s line %d: hash: %w", docsFile, i+1, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	src, _, err := r.openSims()
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.Open(r.path(ClustersJSONL))
	if err != nil {
		return err
	}
	defer f.Close()
	var rows []review.Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<30)
	var scr scratch
	line := 0
	for sc.Scan() {
		line++
		var cl ClusterLine
		if err := json.Unmarshal(sc.Bytes(), &cl); err != nil {
			return fmt.Errorf("%s line %d: %w", ClustersJSONL, line, err)
		}
		for _, rm := range cl.Removed {
			row := review.Row{Doc: int64(rm.Index), Keeper: int64(cl.KeeperIndex), ExtID: rm.ExtID, KeeperExtID: cl.Keeper, Cluster: cl.Cluster,
				Reason: cluster.Reason(rm.Reason), Estimate: 1, Exact: 1, ContentHash: hex.EncodeToString(hashes[rm.Index][:]),
				Decision: review.Proposed}
			if row.Reason != cluster.Exact {
				if row.Estimate, err = src.estimate(rm.Index, cl.KeeperIndex, &scr); err != nil {
					return err
				}
				if row.Exact, err = src.exact(rm.Index, cl.KeeperIndex, &scr); err != nil {
					return err
				}
			}
			rows = append(rows, row)
		}
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.report(int64(line), int64(r.sum.Clusters), "clusters", false, false)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if m := src.missing.Load(); m > 0 {
		return fmt.Errorf("%d shingle sets missing for removals", m)
	}
	h := review.ExportHeader{Dataset: review.Dataset{Name: r.opt.Dataset}, Params: r.opt.Params}
	if err := writeFile(r.path(RemovalsCSV), func(w *bufio.Writer) error { return review.WriteCSV(w, h, rows) }); err != nil {
		return err
	}
	if err := writeFile(r.path(RemovalsJSONL), func(w *bufio.Writer) error { return review.WriteJSONL(w, h, rows) }); err != nil {
		return err
	}
	r.sum.Files = append(r.sum.Files, RemovalsCSV, RemovalsJSONL, ClustersJSONL, SummaryJSON)
	b, err := json.MarshalIndent(r.sum, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(r.path(SummaryJSON), func(w *bufio.Writer) error { _, err := w.Write(append(b, '\n')); return err })
}
