// Package review holds the rules of a removal manifest: what a manifest is, what its
// content hash covers, how its impact on the dataset is measured, how two manifests
// differ, who may do what in which state, and how its approved removals are written out.
// It is pure: plain values in, plain values out; the store (internal/db) keeps manifests
// and internal/manifests carries them through their life.
//
// # A manifest is a plan, like a saved Terraform plan
//
// A run of one configuration (representation, bands × rows, threshold, verification,
// cluster policy, keeper rule) over a dataset proposes removals: one Row per document to
// remove, naming the document kept in its place. Nothing is deleted. People review the
// rows (approve the removal, or exclude the document from removal), change a cluster's
// keeper, cut a chain, and approvers sign the manifest off. The sign-off binds two
// hashes:
//
//   - the manifest's content hash (ManifestHash): SHA-256 over the dataset's identity,
//     every parameter and every row with its review decision (a two-level hash: rows in
//     256 buckets by document, so that one decision rehashes one bucket). Any change to
//     a row or a decision changes it, which dismisses the approvals given to the old
//     hash (GitHub's "dismiss stale approvals").
//   - the dataset snapshot hash (DatasetHasher): SHA-256 over every live document's
//     external id and content hash. A document tombstoned by another manifest, or a
//     changed document, changes it.
//
// Export applies the plan only when both hashes still match the sign-off, recomputed
// from the stored rows and documents at that moment: a manifest or a dataset that
// changed since is refused, the way `terraform apply` refuses a stale plan.
//
// # States
//
//	draft ──request sign-off──▶ in review ──N approvals──▶ signed off ──export──▶ exported
//	                                ▲                          │                     │
//	                                └──── any change ──────────┘        revoke ──────┴──▶ revoked
//
// Whoever prepared a manifest cannot approve it; N approvers are required (a manifest
// setting, 1 by default), each distinct and not the preparer; a standing rejection
// blocks sign-off until a change dismisses it. Every removal must have a decision before
// sign-off is requested. An exported or revoked manifest no longer changes.
//
// # Impact
//
// A removal that falls on one source or language far more often than on the rest of the
// dataset is a sign that the configuration treats that group differently (templated
// READMEs, translations sharing code blocks). Groups reports each group's removal rate
// against the rest of the dataset as a rate ratio with a 95% interval (Katz's log
// method) and Fisher's exact test, its p-values adjusted for the number of groups by
// Holm's method; a group whose adjusted p is under 0.05 is flagged.
package review
