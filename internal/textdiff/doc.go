// Package textdiff shows how two documents differ, for people reading them side by
// side: Compare is a word diff laid out for reading (each side with its own text, and a
// unified column), Shared marks the words each side shares with the other inside a
// shingle of n words, as MinHash sees them.
//
// Compare aligns lines first by patience diff (lines found once in each text anchor the
// alignment, so a paragraph found once in each document stays unchanged whatever
// changes around it), then tokens inside each changed block the same way, with an LCS
// table or Myers' O(ND) diff for regions without anchors, and finally marks runs of
// words removed in one place and added in another as moved. Every pass is deterministic
// and bounded by a work budget (lineBudget, wordBudget, myersSteps), so a pair page
// stays fast on 200 KB documents whatever their likeness and its result does not depend
// on the machine's speed; a comparison cut short by a budget says so (Truncated,
// Reason).
package textdiff
