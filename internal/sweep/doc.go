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
//     removes m-1. ConnectedComponents (single linkage) is built in; other policies are
//     Clusterer functions the caller passes by name.
//
// A Grid lists values for every axis and the sweep scores every combination.
// DefaultGrid is word 1-5 and char 3-7 shingles at k = 128 and 256, thresholds 0.30 to
// 0.95 in steps of 0.05, both verifications and connected components, with the shapes
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
// The sampler draws pairs from a frame (the candidates of a generous banding, plus
// uniformly random pairs) stratified by similarity bin h: the frame's stratum h holds
// N_h pairs, n_h of them drawn and labeled, so each labeled pair of h stands for
// w_h = N_h/n_h pairs (its inverse inclusion probability).
//
// False removals are counted in documents. A false removal is a removed document that
// is not a duplicate of the document kept in its place. A cluster of m documents keeps
// one and removes m-1; the keeper rule is chosen later, when a manifest is proposed, so
// the sweep counts the expected number over a keeper drawn uniformly from the cluster:
// a document k kept, the removed documents that are not its duplicates are false, and
// averaging over the m choices of k counts every non-duplicate pair inside the cluster
// 2/m times. So a non-duplicate pair in a cluster of m documents, merged directly or
// through a chain, accounts for 2/m false removals (1 in a cluster of two), and a
// cluster's false removals never exceed its m-1 removals (FalseRemovalDefinition).
//
// With d_h and a_h the labeled duplicates and accepted duplicates of stratum h, and f_h
// the sum of 2/m over its labeled non-duplicates that end in one cluster of m:
//
//	D = Σ_h w_h·d_h   duplicate pairs in the frame
//	A = Σ_h w_h·a_h   of them accepted
//	F = Σ_h w_h·f_h   false removals, in documents
//	recall = A/D (a ratio estimator)    false-removal rate = F / removals, in [0, 1]
//
// These are post-stratified Horvitz-Thompson estimates. Intervals come from a stratified
// bootstrap: each replicate redraws, within every stratum, n_h-1 of its labeled pairs
// with replacement and weighs each draw w_h·n_h/(n_h-1) (Rao and Wu's rescaling, which
// makes the bootstrap variance match the stratified variance estimator), recomputes
// A/D and F, and the 2.5th and 97.5th percentiles of 1,000 replicates (seeded) bound
// the 95% interval. Every configuration is scored on the same replicates.
//
// A bootstrap cannot show a spread the sample never saw: in a stratum where none of the
// n_h labeled pairs is a false merge it adds nothing, and a configuration with no
// labeled false merge at all would get the interval 0–0 and pass any target. So the
// upper end of F adds, for every stratum without a labeled false merge, the exact
// one-sided 97.5% bound on the number of false merges its N_h pairs can hold when a
// simple random sample of n_h shows none (Stratum.Unseen: the largest K with
// C(N_h-K, n_h)/C(N_h, n_h) >= 0.025, the hypergeometric form of Clopper-Pearson's
// 1-0.025^(1/n_h), about 3.7·N_h/n_h), each counted as a whole false removal (2/m <= 1).
// Value and interval are then capped at the removals, which the truth cannot exceed.
// On a synthetic population the intervals covered the true recall in 95% and the true
// false removals in over 95% of stratified draws (TestEstimatorCoverage), and the truth
// in every draw that saw no false merge (TestEstimatorCoverageZeroEvents). The price is
// honesty about large strata: 65 labeled pairs of 2 million bound the false merges there
// by about 117,000, and no configuration can then be shown to stay under 1%.
//
// The clustering caps these bounds. A false merge is a pair inside one cluster of the
// configuration, and the clustering of every document is known exactly, not sampled.
// When the strata name a similarity bin a sweep can compute without labels
// (ParseStratum: the demo design's strata are rule category × bin of exact Jaccard
// under DemoRep; the category needs a judgement, the bin does not), let C_b be Σ 2/m over
// the configuration's within-cluster pairs whose exact Jaccard falls in bin b, in
// clusters of m documents. Every false removal the strata of bin b hold comes from such
// a pair, so their false removals, whatever their categories, are at most C_b, always:
// a bound with no error probability. The zero-event part of the upper end takes, for
// the strata of each bin without a labeled false merge, min(Σ_h Unseen_h, C_b) instead
// of the sum. Where the plain bound covers the truth so does the capped one (the cap is
// never below what it replaces the bound of), so the coverage above is kept
// (TestCappedBoundCoverage checks it draw by draw). For the demo's different|j0 (pairs
// sharing no shingle at all), C_b counts the pairs that only chains put together:
// usually none. The strata of bins whose within-cluster pairs are many (the high bins of
// a configuration's own duplicates) keep their plain bounds, and those can still hold
// the upper end at the removals. C_b is counted as clusters merge (thresholds falling,
// one union-find pass): documents with equal shingle sets under the bin's representation
// form a class whose inner pairs have J = 1 and are counted, not compared, and two
// classes are compared once (remembered across configurations); each 2/m is rounded up.
// A clustering that would need more than Options.CapWork class comparisons
// (DefaultCapWork: 100,000, which the clusterings of strict configurations stay well
// under; a loose one that chains most of the dataset into one component needs millions)
// keeps the plain bound, as do designs whose strata name no computable bin (imported labels, and
// for now the studio's own draws, whose bins are of the MinHash estimate). Estimate.Capped
// says how much the cap took off.
//
// Advise says how many more labels in which strata would bound a configuration (the
// square-root allocation n_h ∝ sqrt(N_h) minimizes the labels for the bound
// Σ N_h·3.7/n_h; a bin the clustering capped at under a tenth of what the target leaves
// keeps its cap, which comes off the budget, and its strata need no labels) and the
// tightest target the labels meet now.
//
// The estimates use the pairs of one design (Options.Design, or the design with the
// most counted pairs); pairs with no recorded inclusion probability, or of another
// design, count on the labeled-pairs basis only, and Design says how many. They
// assume:
//
//   - duplicates outside the frame (pairs the sampler could never draw) are invisible
//     to every estimate: the random share of each draw is what lets the frame reach low
//     similarities at all;
//   - unlabeled, skipped and flagged pairs are missing at random within their stratum
//     (n_h counts only counted pairs);
//   - the keeper is any member of its cluster with equal chance: a keeper rule that
//     picks hubs (the longest text) can make more false removals than this expects.
//
// Scores.Headline picks the figures the recall chart, Front and Recommend use: the
// dataset estimates when there is a design, else labeled recall and the labeled
// false-merge rate.
//
// # Pareto front and recommendation
//
// A configuration is dominated when another has at least its recall and at most its
// false-removal rate, one of them strictly; Front marks the rest. Recommend picks the
// highest recall among configurations whose false-removal rate stays at or below the
// target at the upper end of its 95% interval (DefaultTarget: 1%), never one that
// removes nothing, and when none does, the one with the lowest upper end, saying so in
// its reason ("not enough labels to bound false removals at 1%"); Advise then says what
// to do next.
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
// whole threshold list costs one union-find pass. Bootstrap replicate totals are integer
// per-stratum counts updated by the pairs whose outcome changed.
//
// Exact Jaccard is computed for the candidates that need it, each pair once per
// representation (a memo shared by its shapes and ks), in document order, with the
// shingle sets kept while they fit a budget and otherwise shingled in blocks (a run of
// first documents whose sets fill half the budget, then each second document once).
// Similarities below the grid's lowest threshold are not computed in full: the merge
// stops once that threshold is out of reach. The labeled pairs' similarities are always
// exact.
//
// Memory is bounded by what a shape proposes, never by all pairs: the signatures of one
// request (4·k bytes a document); shingle sets up to Options.SetBudget (256 MiB); the
// memo up to Options.MemoPairs pairs (16M, 16 bytes each; when they do not all fit, the
// most similar, which every shape proposes again); one shape's candidates at 23 bytes a
// pair (key, agreement count, exact similarity, threshold level, order), plus 16 bytes
// a pair while they are generated and 28 while their exact similarities are computed;
// band keys and flags of 9·b bytes a document; and a few bytes a document for the
// clustering. The pairs a shape can propose are bounded by Options.MaxBucket: a band
// bucket of more documents than that contributes only the pairs of its first MaxBucket
// (as lsh.CandidatesBounded), and the result counts the collisions left out. Measured
// on 100,000 documents (BenchmarkSweep100k): 650 MB of live heap at the peak, for a
// shape proposing 10M pairs.
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
