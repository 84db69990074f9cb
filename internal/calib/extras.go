package calib

import (
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// ExtraGroups is how many Handbook translation groups BuildExtras takes.
const ExtraGroups = 50

// BuildExtras selects the extra documents of the population from the team corpus
// (shared/data/corpus.jsonl.gz), leaving out every document of the demo sample: every
// SPDX license text (those the demo left out are its 76 longest, over 20 kB: GPL,
// LGPL, AGPL, CC and other long licenses, with their deprecated ids, which chain the
// license texts together), and the ExtraGroups Debian Administrator's Handbook
// translation groups whose largest document is smallest (whole groups: every edition
// of a section, the untranslated da-DK, pl-PL and zh-TW editions being natural
// near-copies of the English one). npm LICENSE files are left out: the demo already
// holds 80 of them plus the @types ones, and the other ~190, almost all MIT with another
// copyright line, would add some 28,000 pairs over J = 0.5 to the 9,500 the demo has,
// one clique that would swamp every figure. It is deterministic.
func BuildExtras(corpus io.Reader, demoIDs map[string]bool) ([]Doc, error) {
	zr, err := gzip.NewReader(corpus)
	if err != nil {
		return nil, fmt.Errorf("build extras: %w", err)
	}
	dec := json.NewDecoder(zr)
	var all []Doc
	for line := 1; ; line++ {
		var d struct {
			Doc
			Group *string `json:"group"`
		}
		if err := dec.Decode(&d); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("build extras: corpus line %d: %w", line, err)
		}
		if d.Group != nil {
			d.Doc.Group = *d.Group
		}
		if !demoIDs[d.ID] {
			all = append(all, d.Doc)
		}
	}
	var out []Doc
	groupMax := map[string]int{}
	for _, d := range all {
		switch d.Source {
		case "spdx-license-list":
			out = append(out, d)
		case "debian-handbook":
			groupMax[d.Group] = max(groupMax[d.Group], len(d.Text))
		}
	}
	var groups []string
	for g := range groupMax {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b string) int { return cmp.Or(cmp.Compare(groupMax[a], groupMax[b]), cmp.Compare(a, b)) })
	take := map[string]bool{}
	for _, g := range groups[:min(ExtraGroups, len(groups))] {
		take[g] = true
	}
	for _, d := range all {
		if d.Source == "debian-handbook" && take[d.Group] {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b Doc) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// WriteDocs writes docs as gzipped JSONL (gzip's best compression, no name or time in
// the header, so the file depends on the documents alone).
func WriteDocs(path string, docs []Doc) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
