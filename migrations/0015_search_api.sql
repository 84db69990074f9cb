-- Search-before-insert over HTTP (issue 14): API tokens, indexes bound to a signed-off
-- configuration, and the documents each index holds.
--
-- api_tokens: a token is shown once at creation and kept only as the SHA-256 of its
-- text (32 random bytes). scope names the one endpoint it opens ('search': POST
-- /api/v1/indexes/{id}/search); it opens no page and no other API. A revoked token
-- stays listed (revoked_at, revoked_by) so the audit log's subjects resolve.
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    token_hash   BLOB NOT NULL UNIQUE,
    scope        TEXT NOT NULL CHECK (scope IN ('search')),
    created_by   INTEGER NOT NULL REFERENCES users (id),
    created_at   TEXT NOT NULL,
    last_used_at TEXT NOT NULL DEFAULT '',
    revoked_at   TEXT NOT NULL DEFAULT '',
    revoked_by   INTEGER REFERENCES users (id)
) STRICT;

-- search_indexes: an incremental index under the configuration of a signed-off
-- manifest, copied at creation (params: review.Params as JSON, with the manifest's
-- content hash that was signed off), so later changes to the manifest do not move it.
CREATE TABLE search_indexes (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    manifest_id   INTEGER NOT NULL REFERENCES manifests (id),
    manifest_hash TEXT NOT NULL,
    params        TEXT NOT NULL,
    created_by    INTEGER NOT NULL REFERENCES users (id),
    created_at    TEXT NOT NULL
) STRICT;

-- search_documents: what an index holds, the caller's document id, its signature
-- (k little-endian uint32) and, under exact verification, its sorted shingle-hash set
-- (little-endian uint64; empty otherwise). seq orders the rows as inserted, which is the
-- order the server rebuilds its in-memory buckets in.
CREATE TABLE search_documents (
    seq         INTEGER PRIMARY KEY,
    index_id    INTEGER NOT NULL REFERENCES search_indexes (id) ON DELETE CASCADE,
    doc_id      TEXT NOT NULL,
    signature   BLOB NOT NULL,
    shingles    BLOB NOT NULL,
    inserted_at TEXT NOT NULL,
    UNIQUE (index_id, doc_id)
) STRICT;

-- Every foreign key has an index that starts with it (deleting a user or a manifest
-- then checks its children without a scan). search_documents' (index_id, doc_id)
-- UNIQUE index starts with index_id.
CREATE INDEX api_tokens_created_by ON api_tokens (created_by);
CREATE INDEX api_tokens_revoked_by ON api_tokens (revoked_by);
CREATE INDEX search_indexes_manifest ON search_indexes (manifest_id);
CREATE INDEX search_indexes_created_by ON search_indexes (created_by);
