// Package sweep answers the question Dedup Studio exists for: which MinHash LSH
// configuration removes the duplicates people care about, how many documents would it
// remove by mistake, and how sure can we be. It scores a grid of configurations against
// labeled pairs and estimates the figures over the whole dataset from the sampling
// design that drew the pairs. It takes plain values (documents, a signature provider,
// labeled pairs, categories) and returns plain values; it does no I/O.
//
// # A configuration
//
// A Config is a representation (an lsh.Spec: normalization, word or char shingles and
// their size, k, hash, seed, scheme) × a shape (b bands of r rows, b·r <= k) × a
// threshold t × a verification × a cluster policy:
//
//   - Candidates are the pairs that collide in at least one band.
//   - Verification accepts a candidate when its similarity is at least t: the MinHash
//     estimate (share of equal signature values, standard error sqrt(J(1-J)/k)), or the
//     exact Jaccard similarity of the two shingle sets (what Milvus's
//     mh_search_with_jaccard refinement does).
//   - The policy turns accepted pairs (edges) into clusters; each cluster of m documents
//     keeps one (by the keeper rule) and removes m-1. The policies are internal/cluster's
//     registered ones (components, keeper-star, complete-link), and a Config holds one
//     as a cluster.Policy; a caller may add Clusterer functions under names of its own
//     (Input.Policies).
//
// A Grid lists values for every axis and the sweep scores every combination.
// DefaultGrid is word 1-5 and char 3-7 shingles at k = 128 and 256, thresholds 0.30 to
// 0.95 in steps of 0.05, both verifications and every registered policy, with the shapes
// worth trying for each k chosen by ShapesFor: the distinct datasketch optima
// (lsh.OptimalShape) of the grid's thresholds. Every shape is scored at every
// threshold, so each threshold meets its own optimum and the shapes a row or two
// steeper and flatter (the optima of its neighbours).
//
// # Which labels count
//
// LabelRule, applied by Resolve: the adjudicated label if there is one; else the
// duplicate decision most current human labels give (its category the commonest among
// them, ties to the campaign's order); else (a tie, or no human label) the rule label
// where one exists. Flagged and skipped pairs are left out and counted (LabelSet).
// LabelSet.Version hashes the resolved labels, so a sweep records what it was scored on
// and a page can tell when labels changed since.
//
// # What is measured on the labeled pairs
//
// Over the counted pairs, each rate with its count and a 95% Wilson interval
// (p̃ ± z·sqrt(p(1-p)/n + z²/4n²)/(1+z²/n), centred at p̃ = (p + z²/2n)/(1+z²/n),
// z = 1.96: it keeps its coverage near 0 and 1 and for small n):
//
//   - candidate recall: labeled duplicates that collide in a band;
//   - recall: labeled duplicates accepted (candidate and similarity >= t);
//   - cluster recall: labeled duplicates that end in one cluster, directly or through a
//     chain;
//   - false merges: labeled non-duplicates that end in one cluster, chains included
//     (A~B and B~C put A and C together although nobody accepted A~C): these become
//     false removals, and they measure the policy, not the verifier;
//   - precision: accepted labeled pairs that are duplicates;
//   - recall and false merges per category of the campaign;
//   - removals over the whole dataset (counted, not estimated: every document is
//     clustered), clusters and the largest one;
//   - the same for exact-hash dedup alone (Report.Baseline), the floor every
//     configuration must beat;
//   - the S-curve's prediction next to the measured candidate recall: the mean of
//     1-(1-J^r)^b over the labeled duplicates' exact Jaccard J (each pair collides
//     independently with that probability), and the datasketch optimum for (t, k) next
//     to the optimum fitted to the labeled pairs' similarities
//     (lsh.OptimalShapeObserved);
//   - cost: candidate pairs per document, the time to generate and score, and the index
//     the shape would need at 1M, 100M and 1B documents: b band entries of an 8-byte key
//     and an 8-byte document id per document (16·b bytes), plus 4·k bytes of signature
//     per document when signatures are kept (IndexSizes).
//
// Labeled rates describe the labeled pairs, which are not a random sample of the
// dataset's pairs: a sampler that over-draws the high-similarity bins makes recall look
// better than it is.
//
// # Estimating over the dataset
//
// The question a sweep answers is "how many documents would this remove by mistake, and
// how sure are we?", under the keeper rule that will run. Most of the answer needs no
// label: the sweep clusters every document, so for every configuration, every cluster
// policy (cluster.Policies: connected components in one union-find pass over the
// thresholds, keeper-star and complete-link through internal/cluster as a manifest's run
// clusters) and every keeper rule (Options.Rules, DefaultRules: earliest, longest,
// shortest) it knows exactly which documents are removed, each one's keeper, and which
// candidate pairs are accepted. A false removal is a removed document that is not a
// duplicate of its keeper (FalseRemovalDefinition). What only people can say is whether a
// pair of a given similarity is a duplicate.
//
// So pairs are put in bins of exact Jaccard similarity under the campaign's
// representation (internal/frame: 21 bins, J = 0, (0, 0.05), then twentieths; the demo's
// design its own 12): every accepted pair and every (removed, keeper) pair of every
// configuration and rule, counted exactly (a Profile, stored with the result). Pairs
// whose normalized texts are identical are duplicates for certain, in no bin, and never
// need a label. The labels supply each bin's share of non-duplicates p_b (a Model):
//
//   - the studio's draws (and boundary, random and audit pairs: chosen by similarity or at
//     random, never by their answer) pool per bin, one cell standing for the bin;
//   - the demo's design (strata rule category × bin, known frame sizes N_h) gives cells
//     that split each bin, p_b = Σ_h (N_h/N_b)·p_h, its pairs weighted by their design;
//   - pairs of both kinds in one bin combine, weighted by their effective numbers of
//     labels (Kish's for the cells);
//   - labels that record no draw (imported, picked by hand) may have been chosen for their
//     answer: they count on the labeled-pairs basis only, and without any drawn pair there
//     is no dataset estimate.
//
// Then, with s_b the (removed, keeper) pairs of bin b under a rule, a_b the accepted pairs
// and N_b the bin's pairs in the dataset (the frame's 1/P-corrected count, the design's
// frame sizes), q_b = 1-p_b:
//
//	F = Σ_b s_b·p_b                        false removals, in documents, under the rule
//	A = Σ_b a_b·q_b + accepted identical    duplicate pairs the configuration accepts
//	D = Σ_b N_b·q_b + identical pairs       duplicate pairs from the floor up
//	recall = A/D
//
// The assumption this adds is stated on every page that shows the figures
// (ModelAssumption): the labels of a bin speak for that bin's pairs, including those
// inside a configuration's clusters. A manifest's audit checks it on the removals
// themselves, design-based.
//
// Labels outlive an export. A labeled pair naming a document that a signed-off manifest
// has since removed (Input.Gone, LabelSet.Gone) is still evidence about its bin: it
// counts for the bin's share p_b, binned by the exact Jaccard of the stored texts, and in
// nothing that counts the live dataset's pairs (candidates, clusters, s_b, a_b, the
// labeled-pairs figures). The design's frame sizes stay those of the draw. This adds
// GoneAssumption (Model.Assumption): the shares measured on the pairs at the time of the
// draw hold for the pairs that are left.
//
// Recall counts the duplicates from the floor up: the least similar bin with a labeled
// duplicate (Model.Floor). The floor is itself drawn: where the duplicates thin out, a
// bin holding a few (8% of its pairs, at a rule people apply with a margin) shows none
// in its first 10 labels two times in five, the floor lands a bin too high, and recall
// without that bin's duplicates reads high (intervals held the truth in 55% of draws).
// So recall's interval also counts the guard bin just below the floor (Model.Guard):
// its point share of duplicates is 0 (its labels saw none), the point estimate is
// unchanged, and in the replicates it draws its share from its upper confidence
// distribution (0 duplicates in n labels: the zero-event bound 1-0.025^(1/n) at the
// 97.5% point), capped rank for rank by the floor bin's, on the assumption that a bin's
// share of duplicates does not fall as similarity rises. It is added where it moves
// recall adversely (to the misses, for a configuration that accepts less of the guard
// than of the whole). Below the guard the labels found none either; BelowFloor says how
// many duplicates they cannot rule out there, which no LSH configuration would find
// anyway.
//
// Intervals. Each cell's share gets Clopper-Pearson's lower and upper confidence
// distributions: for x non-duplicates among n labels drawn from a frame of N, the draw at
// u is the CP bound at level u, hypergeometric (exact, so labeling a whole cell leaves no
// uncertainty) or beta when the frame is large; the lower one is 0 when no non-duplicate
// was seen, the upper one then the exact zero-event bound. Per Monte Carlo replicate
// (DefaultReplicates, seeded, the same for every configuration) every bin draws its share
// from both with one uniform, and the sampling of the bin's own pairs is added on top
// (normal, finite-population corrected: s_b pairs taken from a bin of N_b vary less the
// more of the bin they are). F's lower end is the 2.5% quantile of the replicates drawn
// from the lower distributions, its upper end the 97.5% quantile of those from the upper
// ones: Fay and Feuer's construction for weighted sums of rates (1997), with beta or
// hypergeometric in place of gamma, conservative by design. The bins whose labels show
// no mistake are bounded together (zero.go): the observation "no mistake in any of
// them" allows shares p_u with Σ -n_u·log(1-p_u) <= -log(1-u) at level u, and a
// replicate takes the most mistakes among the configuration's removal pairs those
// shares allow (water-filling), plus a Poisson deviate for the removal pairs' sampling;
// its 97.5% point is the exact joint zero-event bound, where summing each bin's own
// zero-event tail would carry up to several times as much. Recall's ends take, bin by
// bin, the distribution that moves recall adversely (the lower one where a configuration
// accepts more of the bin than of the whole, the upper one where less). The confidence
// distributions are checked against brute-force hypergeometric limits and exact coverage
// (cd_test.go); the estimates against exact truth on real text by internal/calib.
//
// Plan (LabelPlan) says how many more labels in which bins would bring a configuration's
// upper end to a target, if they show each bin's share as it stands: greedily, a few at
// a time, where they lower the upper end most (the bins where it removes documents), or
// that no number of labels would (its own share of non-duplicates is over the target).
// GuardPlan says what recall's lowest bins need: labels in the guard bin until the
// duplicates it cannot rule out are at most DefaultGuardShare (0.5%) of the estimated
// duplicates, and as many in the floor bin (labeling both, whatever the first labels
// saw, keeps the point estimate unbiased). With 10 labels a bin, the guard can cost
// recall's lower end 3 to 4 points; with about 100 in each, half a point.
//
// Scores.Headline picks the figures the recall chart, Front and Recommend use: the
// dataset estimates under a keeper rule when there is a model, else labeled recall and
// the labeled false-merge rate.
//
// # Pareto front and recommendation
//
// A configuration is dominated when another has at least its recall and at most its
// false-removal rate, one of them strictly; Front marks the rest. Recommend picks the
// highest recall among configurations whose false-removal rate under the keeper rule
// stays at or below the target at the upper end of its 95% interval (DefaultTarget: 1%),
// never one that removes nothing nor one whose point estimate breaks the target. When
// none meets it, it says so first and names the closest: the lowest upper end among the
// configurations that beat exact-hash dedup's recall, preselected only when its point
// estimate meets the target; the plan then says what to label.
//
// # The engine
//
// Run asks the SignatureFunc once per Requests(grid.Specs): specs that differ in k alone
// share the signature of the largest k when the scheme's i-th permutation does not
// depend on k (CanPrefix: classic, datasketch and milvus; not fast, whose bins do).
// Candidates are generated once per (signatures, shape), with each candidate's
// similarities kept (MinHash agreements, exact Jaccard), and every threshold,
// verification and policy is scored from them. Connected components are built
// incrementally: candidates are bucketed by the highest threshold they reach, edges are
// added from the highest threshold down, and the components are read after each, so a
// whole threshold list costs one union-find pass. Every keeper rule's keepers follow the
// merges (a rule is a total order, so the keeper of two clusters merged is the lesser of
// theirs): only the members of the cluster whose keeper lost are binned again. Each
// candidate's bin under the model's representation is computed once per shape (a class
// of equal shingle sets is compared once with another, remembered).
//
// Exact Jaccard is computed for the candidates that need it, each pair once per
// representation (a memo shared by its shapes and ks), in document order, with the
// shingle sets kept while they fit a budget and otherwise shingled in blocks (a run of
// first documents whose sets fill what of the budget the recent sets leave, then each
// second document once).
// Similarities below the grid's lowest threshold are not computed in full: the merge
// stops once that threshold is out of reach. The labeled pairs' similarities are always
// exact.
//
// Memory is bounded by what a shape proposes, never by all pairs: the signatures of one
// request (4·k bytes a document); shingle sets up to Options.SetBudget (256 MiB); the
// memo up to Options.MemoPairs pairs (16M, 16 bytes each; when they do not all fit, the
// most similar, which every shape proposes again); one shape's candidates at 23 bytes a
// pair (key, agreement count, exact similarity, threshold level, order), plus 16 bytes
// a pair while they are generated (lsh.CandidateKeys: each distinct pair once, never
// each band's collisions) and 28 while their exact similarities are computed; one
// cluster graph at a time for keeper-star and complete-link (about 60 bytes a
// candidate, released once the policies of its k and verification are done); band keys
// and flags of 9·b bytes a document; and a few bytes a document for the clustering. The
// model's frame sizes its bins and is released before the shapes run. The pairs a shape
// can propose are bounded by Options.MaxBucket: a band bucket of more documents than
// that contributes only the pairs of its first MaxBucket (as lsh.CandidatesBounded), and
// the result counts the collisions left out. What BenchmarkSweep100k measured as the
// documents grow is in docs/performance.md.
//
// Progress and OnResult report each configuration as it completes; ctx is checked
// between passes and inside every long loop, and a cancelled Run returns the results
// completed so far, each whole, with ctx.Err(). Results depend only on the inputs and
// Options.Seed.
//
// For the live threshold slider, Prepare keeps one configuration's candidates and their
// similarities (a State); State.Rescore clusters and scores them at a new threshold
// without touching signatures or text, and State.Outcomes lists what happened to each
// labeled pair (false merges and misses first).
package sweep
