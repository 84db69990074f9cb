// Package lsh is Dedup Studio's embedded MinHash LSH engine: normalization, shingling,
// MinHash signatures, banding into candidate pairs, Jaccard similarity, and the S-curve
// maths that ties them together. It does no I/O beyond its inputs: no SQL, no HTTP.
//
// # Representation
//
// A Spec fixes everything that changes a similarity score: normalization steps, word or
// char shingles and their size, the number of hashes k, the base hash, the seed and the
// signature scheme. Its canonical text form (Spec.String) round-trips through ParseSpec
// and its ID is a hash of that form, so a stored score can always name exactly how it was
// computed.
//
// # Signatures
//
// The classic scheme is Broder's MinHash: for k permutations h_i(x) = ((a_i*x + b_i) mod
// 2^61-1) & 0xFFFFFFFF of each shingle's 32-bit base hash x, keep the minimum over the
// document's shingles. Two documents agree at position i with probability equal to the
// Jaccard similarity J of their shingle sets, so the share of agreeing positions estimates
// J with standard error sqrt(J(1-J)/k). The datasketch and milvus schemes are the same
// arithmetic with those systems' base hash, shingling and parameter generators, and give
// bit-identical signatures. The fast scheme (one-permutation hashing with optimal
// densification) hashes each shingle once instead of k times, with the same collision
// probability. On amd64 with AVX-512 the permutation loop runs eight lanes at a time;
// the pure-Go loop gives identical results everywhere else.
//
// # Banding
//
// A Shape cuts the first b*r values of a signature into b bands of r rows. Two documents
// become a candidate pair when any band matches exactly, which happens with probability
// P(s) = 1-(1-s^r)^b at Jaccard s: an S-curve, steepest near (1/b)^(1/r). More rows make
// the curve steeper and move it right (fewer false candidates, more misses); more bands
// move it left. OptimalShape picks b and r for a threshold by weighing the false-positive
// area under the curve left of the threshold against the false-negative area above it
// right of it, as datasketch does; OptimalShapeObserved weighs a sample's observed
// similarities instead of a uniform spread.
package lsh
