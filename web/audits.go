package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/audit"
	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// A manifest's own audit: requesting (or topping up) one, its card on the manifest page
// and its line on the approval form, and the team's rule on audits on the Team page.

// requestAudit draws an audit of the manifest, or more pairs for the one it has.
func (s *server) requestAudit(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	n := audit.DefaultSize
	if v := r.PostFormValue("pairs"); v != "" {
		var ok bool
		if n, ok = parseWhole(v); !ok {
			s.failOnManifest(w, r, m, &formError{field: "pairs to label", msg: strconv.Quote(v) + " is not a whole number"})
			return
		}
	}
	out, err := manifests.RequestAudit(r.Context(), s.store, *userOf(r), m, n, 0)
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	var msg string
	switch {
	case out.TopUp:
		msg = fmt.Sprintf("Drew %s for the audit: %d in all, queued first for labeling.", templates.Plural(out.Added, "more pair", "more pairs"), out.Audit.Size)
	case out.Added == 0:
		msg = "Every removal of this manifest is an identical text: the audit needs no label, and bounds its mistakes at 0."
	default:
		msg = fmt.Sprintf("Drew %d of the %d removals whose texts differ from their keepers' for the audit, queued first for labeling in campaign %d.",
			out.Added, out.Uncertain, out.Audit.CampaignID)
		if n > out.Uncertain {
			msg += fmt.Sprintf(" (%d asked: there are no more.)", n)
		}
	}
	if out.Replaced != 0 {
		msg += " It replaces the audit drawn before the manifest changed."
	}
	if out.NewCampaign {
		msg += " The dataset had no labeling campaign: one was started for the audit's labels."
	}
	s.toManifest(w, r, m.ID, msg)
}

// auditView fills the manifest page's audit card and what the approval form says of it.
func (s *server) auditView(ctx context.Context, v *templates.ManifestPage, m db.Manifest, me *db.User, reviews []review.Review) error {
	a, err := manifests.AuditOf(ctx, s.store, m)
	if err != nil {
		return err
	}
	gate, err := s.store.AuditGate(ctx)
	if err != nil {
		return err
	}
	card := templates.AuditCard{Gate: gate.Text(), GateOn: gate.On(), Assumption: review.AuditAssumption, Size: audit.DefaultSize}
	if e := m.Estimates; e != nil && e.Design != "" && !math.IsNaN(float64(e.FalseRemovals.Value)) {
		card.Model = fmt.Sprintf("%s documents removed by mistake, %s of the removals, under keeper rule %s",
			intervalText(e.FalseRemovals, false), intervalText(e.FalseRemovalRate, true), e.KeeperRule)
		card.ModelAssumption = "It assumes: " + cmpOr(e.Assumption, sweep.ModelAssumption)
	}
	if a != nil {
		card.Has, card.Figure, card.Labeled, card.Drawn, card.Mistakes = true, a.Text(), a.Labeled, a.Drawn, a.Mistakes
		card.Upper, card.UpperRate, card.Removals, card.Certain, card.Covers, card.Tied = a.Upper, review.Percent(float64(a.UpperRate)),
			a.Removals, a.Certain, a.Covers, a.Tied
		card.Design, card.Seeds, card.CampaignID = a.Design, joinSeeds(a.Seeds), a.Campaign
		card.Requested = a.RequestedBy + " on " + a.RequestedAt.Format("2006-01-02 15:04")
		card.Uncertain = a.FrameRemovals - a.FrameCertain
		if a.Covers {
			card.TopUp = a.Drawn < card.Uncertain
			card.Size = min(max(2*a.Drawn, audit.DefaultSize), card.Uncertain)
		}
		switch {
		case me.ID == m.PreparedBy:
			card.NotCounted = "You prepared this manifest: your labels do not count for its audit, and the queue does not serve you its pairs."
		case me.Role.Can(auth.Label) && a.Drawn > a.Labeled:
			card.LabelURL = fmt.Sprintf("/campaigns/%d/next", a.Campaign)
		}
	} else {
		for _, c := range v.ByReason { // the removals by reason: those not exact are uncertain
			if c.Key != string(cluster.Exact) {
				card.Uncertain += c.N
			}
		}
	}
	card.CanRequest = me.Role.Can(auth.RequestAudit) && review.CanRequestAudit(m.State) == nil && len(v.StaleReasons) == 0 &&
		(a == nil || !a.Covers || card.TopUp)
	if card.Size > card.Uncertain && card.Uncertain > 0 {
		card.Size = card.Uncertain
	}
	// The approval that would sign the manifest off is not offered while the team's rule
	// refuses it; earlier approvals are.
	if gate.On() && me.Role.Can(auth.Approve) && review.CanReview(m.State, review.Approve, m.PreparedBy, me.ID) == nil {
		decided, _, err := s.store.Deciders(ctx, m.ID)
		if err != nil {
			return err
		}
		if review.WouldSignOff(reviews, m.PreparedBy, me.ID, m.ApprovalsRequired, v.Proposed, decided) {
			if err := review.CheckAuditGate(gate, a); err != nil {
				var re *review.RefusedError
				if !errors.As(err, &re) {
					return err
				}
				card.GateNow = sentence("your approval would sign this manifest off, so it is not offered yet: " + re.Msg)
			}
		}
	}
	v.Audit = card
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func joinSeeds(seeds []uint64) string {
	parts := make([]string, len(seeds))
	for i, x := range seeds {
		parts[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(parts, ", then ")
}

// auditShorts returns the manifest list's few words on each audited manifest's audit.
func (s *server) auditShorts(ctx context.Context, ms []db.Manifest) (map[int64]string, error) {
	audited, err := s.store.AuditedManifests(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	for _, m := range ms {
		if !audited[m.ID] {
			continue
		}
		a, err := manifests.AuditOf(ctx, s.store, m)
		if err != nil {
			return nil, err
		}
		if a != nil {
			out[m.ID] = a.Short()
		}
	}
	return out, nil
}

// auditGateForm is the Team page's form for the rule on audits.
func (s *server) auditGateForm(ctx context.Context) (templates.AuditGateForm, error) {
	g, err := s.store.AuditGate(ctx)
	if err != nil {
		return templates.AuditGateForm{}, err
	}
	f := templates.AuditGateForm{Text: g.Text(), Target: "1", On: g.On()}
	if g.On() {
		f.Target = strconv.FormatFloat(g.Target, 'g', -1, 64)
	}
	return f, nil
}

// setAuditGate sets (or lifts) the team's rule on audits.
func (s *server) setAuditGate(w http.ResponseWriter, r *http.Request) {
	v, err := manifests.SetAuditGate(r.Context(), s.store, *userOf(r), r.PostFormValue("target"))
	if err != nil {
		s.failOnUsers(w, r, err)
		return
	}
	msg := "Audits before sign-off: no rule; approvals sign manifests off as before."
	if v > 0 {
		msg = fmt.Sprintf("Audits before sign-off: the approval that would sign a manifest off now counts only when its audit bounds "+
			"the mistakes at or under %s of its removals.", review.Percent(v/100))
	}
	s.redirect(w, r, "/admin/users", done(msg))
}

// auditRecordSection is the sign-off record's section on the manifest's audit.
func auditRecordSection(rec review.Record) templates.RecordSection {
	sec := templates.RecordSection{Title: "The manifest's own audit"}
	gate := "not recorded (signed off before records carried it)"
	if rec.AuditGate != nil {
		gate = rec.AuditGate.Text()
	}
	if a := rec.Audit; a != nil {
		sec.Facts = []templates.Param{
			{Name: "Audit", Value: a.Text()},
			{Name: "Drawn", Value: fmt.Sprintf("%s of %d uncertain removals (of %d, %d identical texts), design %s, by %s on %s",
				templates.Plural(a.Drawn, "pair", "pairs"), a.FrameRemovals-a.FrameCertain, a.FrameRemovals, a.FrameCertain, a.Design, a.RequestedBy, a.RequestedAt.Format("2006-01-02 15:04"))},
			{Name: "Seed", Value: joinSeeds(a.Seeds)},
			{Name: "Labeled, mistakes", Value: fmt.Sprintf("%d labeled, %s, %d tied", a.Labeled, templates.Plural(a.Mistakes, "mistake", "mistakes"), a.Tied)},
			{Name: "Upper bound (95%)", Value: fmt.Sprintf("%s, %s of %d removals", templates.Plural(a.Upper, "document", "documents"), review.Percent(float64(a.UpperRate)), a.Removals)},
			{Name: "Assumption", Value: review.AuditAssumption},
		}
	} else {
		sec.Facts = []templates.Param{{Name: "Audit", Value: "none was requested"}}
	}
	sec.Facts = append(sec.Facts, templates.Param{Name: "Team rule", Value: gate})
	return sec
}

// blindOrigin is how the pair page names where a pair came from: an audit's pairs are
// proposed removals, which a labeler who has not decided it yet is not told.
func blindOrigin(origin string, showOthers bool) string {
	if origin == db.AuditOrigin && !showOthers {
		return "drawn"
	}
	return origin
}
