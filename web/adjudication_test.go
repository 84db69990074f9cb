package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue 8 item 5 and issue 11 item 5: labels are blind for annotators (the campaign
// page, the pair page, the exports); the adjudication queue is sorted by disagreement;
// a party to a disagreement is refused while another adjudicator could settle it; and
// Submit and next goes to the next disagreement.
func TestAdjudicationBlindAndByStrangers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign() // pair 1: seed says minor; pair 2: seed says translation
	ann, rev := f.signIn("annotator"), f.signIn("reviewer")
	decide := func(c *http.Cookie, pair, cat string) {
		t.Helper()
		if rec := f.label(c, "/campaigns/1/pairs/"+pair, url.Values{"category": {cat}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("label pair %s: %d", pair, rec.Code)
		}
	}
	decide(ann, "2", "different") // pair 2: two answers
	decide(ann, "1", "different") // pair 1: three answers
	decide(rev, "1", "exact")

	// Annotators see their own labels only.
	_, page := get(t, f.h, "/campaigns/1", ann)
	if strings.Contains(page, `data-testid="adjudication"`) || strings.Contains(page, "seed:") || strings.Contains(page, "seed ·") || !strings.Contains(page, `data-testid="adjudication-blind"`) {
		t.Error("an annotator's campaign page shows the adjudication queue or others' labels")
	}
	if _, body := get(t, f.h, "/campaigns/1/pairs/1", ann); strings.Contains(body, "seed:") || strings.Contains(body, "> seed ") || strings.Contains(body, "reviewer:") {
		t.Error("an annotator's pair page shows others' labels after deciding")
	}
	for _, path := range []string{"/campaigns/1/labels.csv", "/campaigns/1/labels.jsonl"} {
		if res, _ := get(t, f.h, path, ann); res.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s as an annotator: %d; want 403", path, res.StatusCode)
		}
	}
	// The queue: most distinct answers first.
	_, page = get(t, f.h, "/campaigns/1", rev)
	i1, i2 := strings.Index(page, "<td>1</td><td>3</td>"), strings.Index(page, "<td>2</td><td>2</td>")
	if i1 < 0 || i2 < 0 || i1 > i2 {
		t.Errorf("adjudication queue: pair 1 (3 answers) at %d, pair 2 (2 answers) at %d; want pair 1 first", i1, i2)
	}
	// rev labeled pair 1 and the admin could settle it: rev is refused, and served pair 2.
	_, body := get(t, f.h, "/campaigns/1/pairs/1?adjudicate=1", rev)
	if !strings.Contains(body, `data-testid="adjudicate-refused"`) || !strings.Contains(body, "admin can") || strings.Contains(body, `data-testid="label-form"`) {
		t.Error("a party to the disagreement is offered to adjudicate it")
	}
	if rec := f.do("POST", "/campaigns/1/pairs/1/label", rev, url.Values{"category": {"minor"}, "adjudicate": {"1"}, "previous": {previousOf(body)}}); rec.Code != http.StatusForbidden {
		t.Errorf("adjudication by a party: %d; want 403", rec.Code)
	}
	if rec := f.do("GET", "/campaigns/1/disagreements/next", rev, nil); rec.Header().Get("Location") != "/campaigns/1/pairs/2?adjudicate=1" {
		t.Errorf("rev's next disagreement: %s; want pair 2", rec.Header().Get("Location"))
	}
	// The admin settles pair 1; Submit and next goes to pair 2, then back to the queue.
	_, body = get(t, f.h, "/campaigns/1/pairs/1?adjudicate=1", f.admin)
	rec := f.do("POST", "/campaigns/1/pairs/1/label", f.admin, url.Values{"category": {"minor"}, "adjudicate": {"1"}, "previous": {previousOf(body)}})
	loc, body := f.follow(rec, f.admin)
	if !strings.HasPrefix(loc, "/campaigns/1/pairs/2?adjudicate=1&notice=") || !strings.Contains(body, "Adjudicated") || !strings.Contains(body, ": minor edits.") {
		t.Fatalf("after adjudicating pair 1: %s; want pair 2 to adjudicate, saying pair 1 was settled", loc)
	}
	rec = f.do("POST", "/campaigns/1/pairs/2/label", f.admin, url.Values{"category": {"translation"}, "adjudicate": {"1"}, "previous": {previousOf(body)}})
	if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, "/campaigns/1?notice=") || !strings.HasSuffix(loc, "#adjudication") ||
		!strings.Contains(body, `data-testid="adjudication-empty"`) {
		t.Errorf("after the last disagreement: %s; want the campaign's empty queue", loc)
	}
	events, _ := f.store.AuditLog(context.Background(), 5)
	if events[0].Action != "label.adjudicate" || !strings.Contains(events[0].Detail, `"by_party":false`) {
		t.Errorf("latest audit event %+v; want the adjudication", events[0])
	}
}
