package web

import (
	"context"
	"fmt"
	"html"
	"math"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// withDemo loads the demo sample (dataset 1, campaign 1), as a first start does.
func (f *fixture) withDemo() {
	f.t.Helper()
	if _, _, err := demo.Load(context.Background(), f.store); err != nil {
		f.t.Fatal(err)
	}
}

var pairPath = regexp.MustCompile(`^/campaigns/1/pairs/(\d+)`)

// Issue 8 item 2: a new annotator was served pairs 5, 10, ... 100 of the demo, almost
// all byte-identical MIT licenses at Jaccard 1. The first twenty pairs a person labels
// now span the categories and the similarity bins, and no two exact copies come one
// after the other.
func TestDemoQueueSpansTheBins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withDemo()
	ctx := context.Background()
	c, err := f.store.Campaign(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[int64]string{} // the demo's rule label of each pair
	cur, _ := f.store.CurrentLabels(ctx, c.ID)
	for _, l := range cur {
		if l.Annotator == demo.Annotator {
			rules[l.PairID] = l.Category
		}
	}
	stats, _ := f.store.PairStats(ctx, c.ID)
	sim := map[int64]float64{}
	for _, p := range stats {
		sim[p.ID] = math.NaN()
		if p.Similarity.Valid {
			sim[p.ID] = p.Similarity.Float64
		}
	}
	ann := f.signIn("annotator")
	var served []int64
	loc := ""
	rec := f.do("GET", "/campaigns/1/next", ann, nil)
	for len(served) < 20 {
		if rec.Code != 303 {
			t.Fatalf("after %d pairs: %d; want a pair", len(served), rec.Code)
		}
		loc = rec.Header().Get("Location")
		m := pairPath.FindStringSubmatch(loc)
		if m == nil {
			t.Fatalf("after %d pairs the queue sent the annotator to %s", len(served), loc)
		}
		var id int64
		fmt.Sscan(m[1], &id)
		served = append(served, id)
		_, body := get(t, f.h, loc, ann)
		rec = f.do("POST", fmt.Sprintf("/campaigns/1/pairs/%d/label", id), ann,
			url.Values{"category": {rules[id]}, "duplicate": {"no"}, "previous": {previousOf(body)}})
	}
	cats, bins := map[string]bool{}, map[int]bool{}
	exactRun := 0
	for i, id := range served {
		cats[rules[id]] = true
		bins[labels.Bin(sim[id], campaign.Bins)] = true
		exact, err := f.store.PairExact(ctx, c.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if exact && i > 0 {
			if prev, _ := f.store.PairExact(ctx, c.ID, served[i-1]); prev {
				exactRun++
			}
		}
	}
	t.Logf("first 20 pairs: %v; categories %v; bins %v", served, keys(cats), keys(bins))
	if len(cats) < 6 {
		t.Errorf("the first 20 pairs cover %d of the 7 categories (%v); want at least 6", len(cats), keys(cats))
	}
	if len(bins) < 6 {
		t.Errorf("the first 20 pairs cover %d similarity bins (%v); want at least 6", len(bins), keys(bins))
	}
	if exactRun > 0 {
		t.Errorf("%d times an exact copy followed an exact copy among the first 20 pairs", exactRun)
	}
}

func keys[K comparable](m map[K]bool) []K {
	var out []K
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Issue 8 item 3: the demo pair handbook en-US vs ja-JP ftp-file-server. The paragraph
// "Many FTP servers are available in Debian ..." is in both documents and must stay
// unmarked on both sides of the word diff (it was struck through on the left and marked
// inserted on the right).
func TestDemoSharedParagraphUnmarked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withDemo()
	ctx := context.Background()
	ids, err := f.store.DocumentIDs(ctx, 1, []string{"handbook-en-US-sect.ftp-file-server", "handbook-ja-JP-sect.ftp-file-server"})
	if err != nil || len(ids) != 2 {
		t.Fatalf("demo documents: %v, %v", ids, err)
	}
	if _, err := f.store.AddPairs(ctx, 1, []db.NewPair{{DocA: ids["handbook-en-US-sect.ftp-file-server"],
		DocB: ids["handbook-ja-JP-sect.ftp-file-server"], Origin: "test", Wanted: 1}}, "test"); err != nil {
		t.Fatal(err)
	}
	refs, _ := f.store.PairDocs(ctx, 1)
	pair := refs[len(refs)-1].ID
	const paragraph = "Many FTP servers are available in Debian (ftpd(-ssl), proftpd-basic, pure-ftpd\nand so on), which all provide the virtual ftp-server package. " +
		"Please note that\nthe pyftpd package, however, has been removed from the Debian project due to\nnot being actively maintained anymore and being incompatible with Python 3. " +
		"The\nFalcot Corp administrators picked vsftpd because they only use the FTP server\nto distribute a few files (including a Debian package repository); since they\n" +
		"don't need advanced features, they chose to focus on the security aspects."
	res, body := get(t, f.h, fmt.Sprintf("/campaigns/1/pairs/%d", pair), f.signIn("annotator"))
	if res.StatusCode != 200 {
		t.Fatalf("pair page: %d", res.StatusCode)
	}
	for _, side := range []string{"left", "right"} {
		pane := paneText(t, body, side)
		if !strings.Contains(pane.plain, paragraph) {
			t.Errorf("%s side: the shared paragraph is not there unmarked; marked text around it: %q", side, near(pane.marked, "FTP servers"))
		}
	}
}

// paneSpans is a side of the pair page: its text with marked runs (del, ins) replaced
// by a NUL, and the marked runs themselves.
type paneSpans struct {
	plain  string
	marked []string
}

var (
	paneRE   = regexp.MustCompile(`(?s)data-testid="pane-(left|right)">.*?<pre class="doc">(.*?)</pre>`)
	markedRE = regexp.MustCompile(`<span class="(?:del|ins)">([^<]*)</span>`)
)

func paneText(t *testing.T, body, side string) paneSpans {
	t.Helper()
	for _, m := range paneRE.FindAllStringSubmatch(body, -1) {
		if m[1] != side {
			continue
		}
		var p paneSpans
		for _, mm := range markedRE.FindAllStringSubmatch(m[2], -1) {
			p.marked = append(p.marked, html.UnescapeString(mm[1]))
		}
		p.plain = html.UnescapeString(markedRE.ReplaceAllString(m[2], "\x00"))
		return p
	}
	t.Fatalf("no %s pane on the page", side)
	return paneSpans{}
}

func near(marked []string, word string) []string {
	var out []string
	for _, m := range marked {
		if strings.Contains(m, word) {
			out = append(out, m)
		}
	}
	return out
}

// Issue 17: the policy calls behind the demo's labels are stated on the guidelines page
// (the dialog of every pair page), with how shares are measured.
func TestGuidelinesStateThePolicyCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withDemo()
	refs, err := f.store.PairDocs(context.Background(), 1)
	if err != nil || len(refs) == 0 {
		t.Fatalf("demo pairs: %d, %v", len(refs), err)
	}
	res, body := get(t, f.h, fmt.Sprintf("/campaigns/1/pairs/%d", refs[0].ID), f.signIn("annotator"))
	if res.StatusCode != 200 {
		t.Fatalf("pair page: %d", res.StatusCode)
	}
	for _, want := range []string{
		`data-testid="guidelines-policy"`,
		"Measure every share on the two texts together",
		"A license contained in another is a duplicate only when it is most of the container",
		"A partly translated edition is not a duplicate",
		"Boilerplate-heavy pairs are never duplicates in the demo",
		// Round 5: what a shared sentence is, and that it counts toward the tenth.
		"A word or two changed means in the whole sentence",
		"A shared sentence counts toward the tenth",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the guidelines dialog lacks %q", want)
		}
	}
}
