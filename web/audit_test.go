package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The audit chain's head is published where people keep things: on the sign-off
// record (page and signoff.json), at the export, and on the audit page, which checks a
// head kept elsewhere against the chain.
func TestAuditHeadPublishedAndChecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.withManifest(searchParams(review.Exact), true)
	sos, err := f.store.SignOffs(ctx, m.ID)
	if err != nil || len(sos) != 1 || sos[0].Record.AuditHead == nil {
		t.Fatalf("sign-offs %+v, %v; want one whose record has the audit head", sos, err)
	}
	head := *sos[0].Record.AuditHead
	check, _ := f.store.VerifyAudit(ctx, review.AuditHead{})
	if head.Entries != check.Rows-1 || len(head.Hash) != 64 {
		t.Errorf("the record's head %+v; want the entry before the sign-off's own (%d entries now)", head, check.Rows)
	}
	appr := f.signIn("approver")
	_, page := get(t, f.h, fmt.Sprintf("/manifests/%d/signoff", m.ID), appr)
	if !strings.Contains(page, "Audit chain head at sign-off") || !strings.Contains(page, head.String()) {
		t.Errorf("the sign-off page does not show the audit head %s", head)
	}
	rec := f.do("POST", fmt.Sprintf("/manifests/%d/export", m.ID), appr, map[string][]string{"hash": {m.ContentHash}, "count": {strconv.Itoa(f.approvedCount(m))}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("export: %d\n%s", rec.Code, rec.Body.String())
	}
	_, body := get(t, f.h, fmt.Sprintf("/manifests/%d/signoff.json", m.ID), appr)
	var so struct {
		Record     review.Record
		ExportHead *review.AuditHead `json:"audit_head_at_export"`
	}
	if err := json.Unmarshal([]byte(body), &so); err != nil || so.Record.AuditHead == nil || *so.Record.AuditHead != head ||
		so.ExportHead == nil || so.ExportHead.Entries <= head.Entries {
		t.Errorf("signoff.json: %v, record head %+v, export head %+v; want %+v and a later one", err, so.Record.AuditHead, so.ExportHead, head)
	}
	if _, page := get(t, f.h, fmt.Sprintf("/manifests/%d/signoff", m.ID), appr); !strings.Contains(page, "Audit chain head at the export") {
		t.Error("the sign-off page of an exported manifest does not show the head at the export")
	}

	// The audit page: the current head with its entries, and a kept head checked.
	_, page = get(t, f.h, "/audit", f.admin)
	check, _ = f.store.VerifyAudit(ctx, review.AuditHead{})
	if !strings.Contains(page, `data-testid="audit-head"`) || !strings.Contains(page, check.Head) ||
		!strings.Contains(page, fmt.Sprintf("-head %s -entries %d", check.Head, check.Rows)) {
		t.Errorf("the audit page does not publish the head %s (%d entries)", check.Head, check.Rows)
	}
	_, page = get(t, f.h, fmt.Sprintf("/audit?head=%s&entries=%d", head.Hash, head.Entries), f.admin)
	if !strings.Contains(page, `data-intact="true"`) || !strings.Contains(page, fmt.Sprintf("The head you kept is entry %d", head.Entries)) {
		t.Errorf("the audit page does not confirm the sign-off's head:\n%.2000s", page)
	}
	other := strings.Repeat("ab", 32)
	res, page := get(t, f.h, "/audit?head="+other, f.admin)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-intact="false"`) || !strings.Contains(page, "no entry carries the head kept elsewhere") {
		t.Errorf("a head not in the chain: %d\n%.2000s", res.StatusCode, page)
	}
	if res, _ := get(t, f.h, "/audit?head=nothex", f.admin); res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a malformed head: %d; want 422", res.StatusCode)
	}
}

// Every action the store records reads as words on the audit page, and a sweep's start
// names the person who started it and links the sweep: the page said "alice (was
// user:1) sweep.start sweep 2", as if alice had been renamed, with the action's code.
func TestAuditLogSaysWhatHappened(t *testing.T) {
	t.Parallel()
	literal := regexp.MustCompile(`(?:auditBy|audit|Audit|AuditBy)\([^"\n]*"([a-z_-]+\.[a-z_.-]+)"`)
	change := regexp.MustCompile(`(?:change\{action|Decision\{[^\n]*?Action): "([a-z-]+)"`)
	var recorded []string
	for _, dir := range []string{"../internal/db", "../internal/manifests", "."} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("sources of %s: %v, %v", dir, files, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
				recorded = append(recorded, m[1])
			}
			if dir != "." {
				for _, m := range change.FindAllStringSubmatch(string(src), -1) {
					recorded = append(recorded, "manifest."+m[1])
				}
			}
		}
	}
	if !slices.Contains(recorded, "sweep.start") || !slices.Contains(recorded, "manifest.decide") {
		t.Fatalf("found the actions %v; want sweep.start and manifest.decide among them (has the store's code moved?)", recorded)
	}
	for _, a := range recorded {
		if actionText(a) == a {
			t.Errorf("actionText(%q) = %q; want it in words", a, a)
		}
	}

	f := newFixture(t, 1<<20)
	_, id := f.sweptCorpus(3, "audited")
	_, page := get(t, f.h, "/audit", f.admin)
	if !strings.Contains(page, "started a sweep") || !strings.Contains(page, fmt.Sprintf(`href="/sweeps/%d"`, id)) || strings.Contains(page, "(was user:") {
		t.Errorf("the audit page after a sweep's start: want \"started a sweep\", a link to /sweeps/%d and no \"(was user:…)\"\n%s", id, page)
	}
}
