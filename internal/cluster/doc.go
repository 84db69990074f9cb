// Package cluster turns verified near-duplicate pairs into clusters, each with one
// document kept (the keeper) and the others proposed for removal, and says how far each
// cluster can be trusted. It is pure: documents are the indices 0..n-1, similarities come
// from the caller's edges and the caller's Sim function; no SQL, no HTTP, no I/O.
//
// # Exact duplicates first
//
// Documents whose texts are equal after the representation's normalization (ExactGroups)
// collapse into one node before anything else: they are removed for a reason nobody needs
// to review ("exact", similarity 1), they cost one Sim call between them instead of one
// each, and they cannot chain. What follows works on nodes and speaks of documents.
//
// # Why single linkage chains
//
// LSH with verification gives edges: pairs whose similarity passes a threshold t. The
// usual next step (datatrove, text-dedup, NeMo Curator) is to union-find the edges and
// keep one document per connected component. That is single linkage: a document joins a
// cluster when it passes t with any one member. Similarity is not transitive, so a chain
// A~B~C with J(A,B) = J(B,C) = 0.6 can have J(A,C) = 0.2: C is removed "as a duplicate of
// A" though the two share little. On real text this is not a corner case. Licenses share
// long clauses, templated READMEs share their scaffolding, translations of one manual
// share code and names, and at a generous threshold the components grow into hundreds of
// documents whose typical pair is far below t. A removal count from components measures
// the graph's connectivity as much as duplication, and a false merge (a labeled
// non-duplicate pair inside one cluster) blames the clustering step, not the verifier.
//
// # The policies and what they trade
//
//   - Components (single linkage): every component is one cluster. Most removals, cheapest
//     (one union-find pass), and the only policy whose clusters can be chained.
//   - KeeperStar: the keeper is chosen first, and a document is removed only if its own
//     similarity to the keeper passes t; the rest of the component splits off and is
//     clustered the same way, recursively. Every removal is directly justified against
//     what is kept, which is the guarantee a reviewer wants, at the cost of asking Sim for
//     pairs LSH never proposed and of removing less: two documents linked only through a
//     third stay, each in its own cluster.
//   - CompleteLink: every pair in a cluster passes t, built greedily (strongest edge
//     first, merge only when all cross pairs pass). The strictest clusters, and the ones
//     whose keeper could be swapped for any member without a new removal failing; the
//     fewest removals, and the greedy order matters (a document goes with whichever
//     clique reaches it first).
//
// Under one rule, what keeper-star and complete-link remove is a subset of what
// components removes: components keeps only each component's best document, the other
// two keep it as well and more. The documents in the difference are decided by the
// clustering policy, not by the similarity threshold, which is why the sweep takes the
// policy as an axis. Keeper-star and complete-link bound their work on big
// components (Config.Budget) by refusing to check more pairs, never by accepting unchecked
// ones, and report where that happened (Result.Limited).
//
// # The keeper rule
//
// Which document is kept matters beyond which text survives. Under components the keeper
// only names the cluster; under keeper-star it decides who is removed, since everything is
// measured against it. A rule that prefers long texts picks superset documents (a bundled
// LICENSE file that contains three licenses, a README that embeds its license) which
// overlap many small ones at once: they are hubs, and a hub keeper pulls in documents that
// are similar to it but not to each other. On real text the keeper rule alone moves false
// removals by a factor of two to three, so a Rule is stated, recorded with every result
// (Rule.String), and can be overridden per cluster with a reason (Graph.Override). Every
// rule ends with the lowest index (import order), so keepers never depend on input order.
//
// # Diagnostics
//
// A cluster's links are the pairs of members known to pass t (see Diagnostics). A member
// whose direct similarity to the keeper is under t is chained: it is in the cluster only
// through others, and the chain from the keeper to the farthest member shows how. The
// suggested cut is a bridge of the links that separates the most chained members while
// separating the fewest members that pass the keeper; Graph.Cut applies it. Reviewers sort
// clusters by ByRisk: chained first, then by weakest link.
package cluster
