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
// pairs with J >= 0.2, 10,753 duplicates at tau = 0.5 and 7,973 at tau = 0.7, built in
// 1 to 5 s on two shared cores.
//
// A pair is a duplicate at tau when its normalized texts are identical or its Jaccard
// similarity is at least tau (Duplicate); the check labels at tau = 0.5 and 0.7.
//
// # The truth of a configuration
//
// Engine computes the truth of a configuration (representation and k, shape, threshold,
// verification by the MinHash estimate or by exact Jaccard under the configuration's own
// representation) apart from internal/sweep, so that it checks the sweep: candidates from
// lsh.CandidatesBounded with lsh.MaxBucket; accepted, the candidates whose similarity
// reaches the threshold; clusters from internal/cluster exactly as a studio run
// (internal/dedup) makes them, with exact groups of identical normalized texts, under
// connected components, keeper-star and complete-link, and the keeper rules earliest
// (import order, the population having no dates), longest and shortest (text bytes).
// From these:
//
//   - true recall = accepted duplicate pairs / all duplicate pairs (pair level, over every
//     pair of the population);
//   - per policy and keeper rule, every (removed, keeper) pair with its exact Jaccard under
//     the campaign's representation, whatever its similarity; true false removals are the
//     removals whose document is not a duplicate of its keeper;
//   - the counts an estimator built on exact bins needs: accepted pairs and removal pairs
//     per frame.J21 bin of that Jaccard, identical normalized texts apart.
//
// # The check
//
// Check runs the studio's own path: a real SQLite store, the population imported as a
// dataset (internal/ingest), and for every draw a new campaign into which campaign.Draw
// (the code of the "draw pairs" form) draws at most 800 pairs under drawPlan; every drawn
// pair gets a rule label at each tau (a rule annotator's label, as label imports store
// them; the second tau's campaign holds the same pairs with their design), and the grid is
// swept over the store's labels with sweeprun's inputs and seed (sweep.Run). Each
// result's estimates (estimatesOf) are set against the truth of their configuration,
// policy and keeper rule: coverage of the 95% interval, the mean estimate and its bias,
// the mean width, and, where the true false-removal rate is at most 1%, the share of
// draws whose upper end is at most 3% of the removals. Signatures and the truth are
// computed once per check; a draw costs the draw, the labels and the sweeps.
//
// Three functions are where the estimator meets the check, kept small so they follow
// it: drawPlan (today: equal pairs per bin of estimated similarity plus random pairs),
// sweepPolicies (today: keeper-star and complete-link given to the sweep as clusterers,
// once per keeper rule) and estimatesOf (today: one false-removal figure, the expectation
// over a uniform keeper, set against every rule's truth). Table.PerRule says whether the
// sweep gave each rule its own figure.
//
// # Bars
//
// IssueBars are the targets for the full check (>= 200 draws): coverage >= 0.93
// for recall and for false removals under each keeper rule, recall bias within ±0.005,
// and an upper end <= 3% of removals in >= 80% of draws where the true rate is <= 1%.
// The fast test in `go test ./...` runs 20 draws of FastGrid with FastBars.
//
// Run the full check with `go run ./cmd/calibcheck` (or DEDUP_CALIB_FULL=1 go test
// ./internal/calib -run TestCheckFull -timeout 2h); `-truth` prints the truth table of the
// grid.
package calib
