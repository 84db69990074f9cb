// Package calib checks the studio's estimates against exact truth on real text (issue 23,
// point 6): a population of real documents whose every relevant pair is known exactly,
// rule labels that say which pairs are duplicates, the truth of every configuration of a
// fixed grid, and a harness that draws and labels pairs the way the studio does and
// measures how often the sweep's 95% intervals hold the truth.
//
// # The population
//
// Documents returns the demo sample (internal/demo, 2,136 documents: SPDX licenses, npm
// READMEs and LICENSE files, Debian Reference and Handbook sections) followed by the 926
// documents of testdata/extra.jsonl.gz (BuildExtras; provenance in testdata/README.md):
// the 76 SPDX licenses over 20 kB the demo left out and 50 whole Handbook translation
// groups, 3,062 documents in all. The campaign's representation is lsh.DefaultSpec (NFKC,
// lowercase, collapsed white space, word 5-shingles). NewPopulation lists every pair
// whose Jaccard similarity under it is at least MinJaccard = 0.2, exactly: shared
// shingles are counted through an inverted index over the classes of equal shingle sets
// (frame.Sets), at a cost of Σ df²/2 over shingles, with no banding and no sampling, and
// any other pair's counts come from frame.Sets on demand. On the population: 21,179
// pairs with J >= 0.2, 10,753 duplicates at tau = 0.5, 7,973 at 0.7 and 9,194 under the
// ramp 0.6~0.15, built in
// 1 to 5 s on two shared cores.
//
// # Label rules
//
// LabelRule says which pairs are duplicates; the check labels every drawn pair with it
// and the truth counts with it. A cut at tau: identical normalized texts, or Jaccard >=
// tau; the rules are cuts at 0.5 and 0.7. Both fall on edges of the studio's
// bins (frame.J21, twentieths of exact Jaccard under the campaign's representation), so
// every bin holds only duplicates or only non-duplicates: a bin's share is exact from
// its first label, and every draw's estimate equals the truth. Under these rules the
// check measures exact counting and the width of the intervals (the useful upper end),
// not their coverage, and its draws all give the same figures. A ramp (tau~ramp, e.g.
// 0.6~0.15) makes a pair with Jaccard inside tau±ramp a duplicate with a probability
// rising linearly across it, fixed per pair by a hash of its documents, as people near a
// cut disagree: the bins it crosses are mixed, their shares are estimated from samples,
// and the coverage of the intervals is put to the test. Within a bin the chance still
// rises with Jaccard, so a configuration whose clusters hold a bin's more similar pairs
// also tests the estimator's assumption that a bin's labels speak for its pairs inside
// clusters.
//
// # The truth of a configuration
//
// Engine computes the truth of a configuration (representation and k, shape, threshold,
// verification by the MinHash estimate or by exact Jaccard under the configuration's own
// representation) apart from internal/sweep, so that it checks the sweep: candidates from
// lsh.CandidatesBounded with lsh.MaxBucket; accepted, the candidates whose similarity
// reaches the threshold; clusters from internal/cluster exactly as a studio run
// (internal/manifests) makes them, with exact groups of identical normalized texts, under
// connected components, keeper-star and complete-link, and the keeper rules earliest
// (import order, the population having no dates), longest and shortest (text bytes).
// From these:
//
//   - true recall = accepted duplicate pairs / all duplicate pairs (pair level, over every
//     pair of the population);
//   - per policy and keeper rule, every (removed, keeper) pair with its exact Jaccard under
//     the campaign's representation, whatever its similarity; true false removals are the
//     removals whose document is not a duplicate of its keeper;
//   - the counts the sweep's estimates start from: accepted pairs and removal pairs per
//     frame.J21 bin of that Jaccard, identical normalized texts apart. Every sweep
//     result's Profile must equal them exactly (Table.Mismatches).
//
// # The check
//
// Check runs the studio's own path: a real SQLite store, the population imported as a
// dataset (internal/ingest), the studio's sweep service (internal/sweeprun, which reads
// the labels and each pair's design and origin as the sweep form's sweeps do), and for
// every draw and label rule a new campaign labeled the way a person would:
//
//  1. a first phase through campaign.Draw, the code of the "draw pairs" form: 10 pairs
//     from every bin and 20 uniformly random pairs (FirstPerBin, FirstRandom), each given
//     the rule's label as a rule annotator's label;
//  2. a sweep of the grid, one per representation with every policy, and the
//     dashboard's analysis of it (sweeprun.Analyze: the results and the model as
//     stored);
//  3. a second phase of the rest of the budget (at most 800 labels a draw in all) drawn
//     where the studio's labeling plans put it (SecondPlan): sweep.Model.Plan to a 3%
//     upper end for every configuration and keeper rule whose point estimate of false
//     removals per removal meets 1% and whose upper end is over 3%, each bin getting
//     the most any plan asks of it (one label serves every configuration that removes
//     pairs in its bin), bins whose every label says "not a duplicate" left out (with
//     Options.GuardPlans, calibcheck -guard-plans, recall's guard and floor bins also get
//     what sweep.Model.GuardPlan asks), scaled to the budget. Nothing of the truth
//     enters the plan;
//  4. a final sweep, whose results are set against the truth of their configuration,
//     policy and keeper rule: coverage of the 95% interval, the mean estimate and its
//     bias, the mean width, and, where the true false-removal rate is at most 1%, the
//     share of draws whose upper end is at most 3% of the removals.
//
// Signatures and the truth are computed once per check; a draw costs two draws, the
// labels and four sweeps (two per phase on the default grid).
//
// # The manifest's audit
//
// Audits simulates the audit a manifest gets before sign-off (internal/audit): for every
// configuration, policy and keeper rule whose true false-removal rate is at most 0.3%,
// 1,000 audits each draw 300 of its uncertain removals (identical normalized texts are
// the certain stratum), label them by the rule and bound the mistakes with
// audit.Estimate; the row counts how often the bound holds the truth and how often it is
// at most 1.5% of the removals, next to the exact probabilities of both over the
// hypergeometric distribution of the mistakes an audit finds.
//
// # Bars
//
// IssueBars are the targets for the full check (>= 200 draws): coverage >= 0.93
// for recall and for false removals under each keeper rule, recall bias within ±0.005,
// and an upper end <= 3% of removals in >= 80% of draws where the true rate is <= 1%;
// AuditBars the audit's (bound <= 1.5% in >= 80% of audits, coverage >= 95%). The fast
// test in `go test ./...` runs 4 draws of FastGrid with FastBars.
//
// Run the full check with `go run ./cmd/calibcheck -draws 200` (FullTaus: the issue's
// cuts and the ramp 0.6~0.15; or DEDUP_CALIB_FULL=1 go test ./internal/calib -run
// TestCheckFull -timeout 8h);
// `-truth` prints the truth table of the grid.
package calib
