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
// bit-identical signatures (see Compatibility profiles). The fast scheme (one-permutation hashing with optimal
// densification) hashes each shingle once instead of k times, with the same collision
// probability. On amd64 with AVX-512 the permutation loop runs eight lanes at a time;
// the pure-Go loop gives identical results everywhere else.
//
// # Compatibility profiles
//
// scheme=datasketch is datasketch's MinHash: numpy RandomState(seed) parameters and
// sha1_hash32. It reproduces all 120 signatures made by datasketch 1.10 in
// testdata/datasketch-vectors.jsonl.gz.
//
// scheme=milvus is Milvus's MinHash function (FunctionType.MINHASH) as its code computes
// it, and ParseSpec takes that function's params (num_hashes, shingle_size, hash_function,
// token_level, seed) under Milvus's names, defaults and values. It follows
// internal/util/function/minhash_function.go (NewMinHashFunctionRunner: parameters and
// defaults), internal/core/src/minhash/MinHashComputer.cpp (HashNGramWindow: shingles;
// SelectHashFunction: base hashes; InitPermutations: a = rng()%(P-1)+1, b = rng()%P from
// std::mt19937_64(seed); ComputeBatchRotation and the fusion_compute kernels: the minimum
// of ((a*x+b) mod P) & 0xFFFFFFFF) and, for word level, the default "standard" analyzer of
// Milvus's tantivy binding (analyzer/build_in_analyzer.rs: tantivy's SimpleTokenizer, then
// LowerCaser). What that code does and Milvus's documentation does not say:
//
//   - char shingles are windows of raw UTF-8 bytes, with no lowercasing or normalization
//     (so the profile's default is norm=none);
//   - word tokens are maximal runs of runes for which Rust's char::is_alphanumeric holds
//     (the Alphabetic property or a number): "isn't" gives isn and t, "3.14" gives 3 and
//     14, a run of ideographs and kana with no separator is one token; each is lowercased
//     rune by rune with Rust's char::to_lowercase (İ becomes i + U+0307, Σ is always σ);
//   - shingles join their tokens with nothing. Milvus's docs show them joined by spaces,
//     but the code is what runs;
//   - a text with fewer tokens (bytes) than shingle_size is one shingle, and a text with
//     none has the all-0xFFFFFFFF signature;
//   - hash_function=xxhash is the low 32 bits of XXH3-64; sha1 puts the first four digest
//     bytes, little-endian, in a C++ int, so a value with bit 31 set reaches the
//     permutations sign-extended to 64 bits ("The" gives 0xffffffffd80def93).
//
// It reproduces all 256 signatures of testdata/milvus-vectors.jsonl.gz (32 texts x 8
// settings), computed by that C++ code compiled here (g++ 12, OpenSSL SHA-1, libxxhash
// 0.8.1) with a port of the analyzer for word level. No Milvus server could be run here:
// the profile was checked against Milvus's code, not a live server. Go's Unicode tables
// (15.0.0) decide what is alphanumeric, so a Milvus built with a newer Rust may split on
// characters assigned since differently; and a field with its own analyzer_params in
// Milvus tokenizes as those params say, not as the default analyzer.
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
