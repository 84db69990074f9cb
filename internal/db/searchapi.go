package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The search-before-insert API (migration 0015): API tokens, indexes bound to a
// signed-off configuration, and the documents they hold.

// APIToken is a token for the search API, as the Team page lists it. Its text is never
// stored: only its hash, which is how a request finds it.
type APIToken struct {
	ID          int64
	Name        string
	Scope       string // "search": POST /api/v1/indexes/{id}/search and nothing else
	CreatedByID int64
	CreatedBy   string
	CreatedAt   time.Time
	LastUsed    time.Time // zero: never used
	Revoked     bool
	RevokedAt   time.Time
	RevokedBy   string
	// CreatorRole and CreatorDisabled are the creator's account now: a token carries
	// its creator's authority, and stops working when they are disabled or no longer an
	// admin.
	CreatorRole     auth.Role
	CreatorDisabled bool
}

// ScopeSearch is the scope of every token: the search endpoint.
const ScopeSearch = "search"

const apiTokenColumns = `t.id, t.name, t.scope, t.created_by, cu.name, t.created_at, t.last_used_at, t.revoked_at, coalesce(ru.name, ''),
	cu.role, cu.disabled_at IS NOT NULL`

const apiTokenFrom = ` FROM api_tokens t JOIN users cu ON cu.id = t.created_by LEFT JOIN users ru ON ru.id = t.revoked_by`

func scanAPIToken(sc scanner) (APIToken, error) {
	var t APIToken
	var created, used, revoked, role string
	if err := sc.Scan(&t.ID, &t.Name, &t.Scope, &t.CreatedByID, &t.CreatedBy, &created, &used, &revoked, &t.RevokedBy,
		&role, &t.CreatorDisabled); err != nil {
		return t, notFound(err)
	}
	var err error
	if t.CreatorRole, err = auth.ParseRole(role); err != nil {
		return t, err
	}
	if t.CreatedAt, err = parseTime("created_at", created); err != nil {
		return t, err
	}
	if t.LastUsed, err = parseOptTime("last_used_at", used); err != nil {
		return t, err
	}
	if revoked != "" {
		t.Revoked = true
		if t.RevokedAt, err = parseTime("revoked_at", revoked); err != nil {
			return t, err
		}
	}
	return t, nil
}

func apiTokenSubject(id int64) string { return fmt.Sprintf("api_token:%d", id) }

// CreateAPIToken stores a search token under the hash of its text, recording who made
// it in the audit log, in one transaction.
func (d *DB) CreateAPIToken(ctx context.Context, actor User, name string, tokenHash []byte) (APIToken, error) {
	var t APIToken
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO api_tokens (name, token_hash, scope, created_by, created_at) VALUES (?, ?, ?, ?, ?)`,
			name, tokenHash, ScopeSearch, actor.ID, d.stamp())
		if isUnique(err) {
			return ErrConflict
		}
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if t, err = scanAPIToken(tx.QueryRowContext(ctx, `SELECT `+apiTokenColumns+apiTokenFrom+` WHERE t.id = ?`, id)); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "api_token.create", apiTokenSubject(id), map[string]any{"name": name, "scope": ScopeSearch})
	})
	if err != nil {
		return APIToken{}, fmt.Errorf("create api token %q: %w", name, err)
	}
	return t, nil
}

// RevokeAPIToken revokes a token at once (the next request with it is refused), recorded
// in the audit log. An unknown or already revoked token is ErrNotFound.
func (d *DB) RevokeAPIToken(ctx context.Context, actor User, id int64) (APIToken, error) {
	var t APIToken
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at = ''`,
			d.stamp(), actor.ID, id)
		if err != nil {
			return err
		}
		if err := oneRow(res); err != nil {
			return err
		}
		if t, err = scanAPIToken(tx.QueryRowContext(ctx, `SELECT `+apiTokenColumns+apiTokenFrom+` WHERE t.id = ?`, id)); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "api_token.revoke", apiTokenSubject(id), map[string]any{"name": t.Name})
	})
	if err != nil {
		return APIToken{}, fmt.Errorf("revoke api token %d: %w", id, err)
	}
	return t, nil
}

// revokeAPITokensOf revokes, in tx, every live token userID made, each recorded in the
// audit log with why.
func (d *DB) revokeAPITokensOf(ctx context.Context, tx *sql.Tx, actor User, userID int64, why string) error {
	type live struct {
		id   int64
		name string
	}
	ts, err := collect(ctx, tx, `SELECT id, name FROM api_tokens WHERE created_by = ? AND revoked_at = ''`, func(sc scanner) (live, error) {
		var t live
		return t, sc.Scan(&t.id, &t.name)
	}, userID)
	if err != nil {
		return err
	}
	stamp := d.stamp()
	for _, t := range ts {
		if _, err := tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ?`, stamp, actor.ID, t.id); err != nil {
			return err
		}
		if err := d.auditBy(ctx, tx, actor, "api_token.revoke", apiTokenSubject(t.id), map[string]any{"name": t.name, "why": why}); err != nil {
			return err
		}
	}
	return nil
}

// APITokens lists every token, revoked ones too, newest first.
func (d *DB) APITokens(ctx context.Context) ([]APIToken, error) {
	ts, err := queryAll(ctx, d, `SELECT `+apiTokenColumns+apiTokenFrom+` ORDER BY t.id DESC`, scanAPIToken)
	if err != nil {
		return nil, fmt.Errorf("api tokens: %w", err)
	}
	return ts, nil
}

// APITokenByHash finds the token whose text hashes to tokenHash, revoked or not (the
// caller refuses a revoked one); ErrNotFound when there is none.
func (d *DB) APITokenByHash(ctx context.Context, tokenHash []byte) (APIToken, error) {
	t, err := scanAPIToken(d.r.QueryRowContext(ctx, `SELECT `+apiTokenColumns+apiTokenFrom+` WHERE t.token_hash = ?`, tokenHash))
	if err != nil {
		return t, fmt.Errorf("api token: %w", err)
	}
	return t, nil
}

// TryTouchAPIToken records that a token was used, unless another write of this process
// is running or waiting: the time is a hint for the Team page, not worth making a
// search wait for the write turn. It reports whether it wrote.
func (d *DB) TryTouchAPIToken(ctx context.Context, id int64) (bool, error) {
	ok, err := d.tryInTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, d.stamp(), id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("touch api token %d: %w", id, err)
	}
	return ok, nil
}

// SearchIndex is an incremental index for search-before-insert under the configuration
// of a signed-off manifest (copied when the index was made).
type SearchIndex struct {
	ID           int64
	Name         string
	ManifestID   int64
	ManifestHash string // the content hash that was signed off
	// ManifestState is the manifest's state now: a revoked manifest's index stops
	// answering.
	ManifestState review.State
	Params        review.Params
	CreatedBy     string
	CreatedAt     time.Time
	Docs          int // documents it holds (SearchIndexes only)
}

const searchIndexColumns = `x.id, x.name, x.manifest_id, x.manifest_hash, x.params, u.name, x.created_at, m.state`

const searchIndexFrom = ` FROM search_indexes x JOIN users u ON u.id = x.created_by JOIN manifests m ON m.id = x.manifest_id`

func scanSearchIndex(sc scanner) (SearchIndex, error) {
	var x SearchIndex
	var params, created, state string
	if err := sc.Scan(&x.ID, &x.Name, &x.ManifestID, &x.ManifestHash, &params, &x.CreatedBy, &created, &state); err != nil {
		return x, notFound(err)
	}
	x.ManifestState = review.State(state)
	if err := json.Unmarshal([]byte(params), &x.Params); err != nil {
		return x, fmt.Errorf("search index %d params: %w", x.ID, err)
	}
	var err error
	x.CreatedAt, err = parseTime("created_at", created)
	return x, err
}

// CreateSearchIndex makes an empty index under the configuration of manifest
// manifestID, which must be signed off (or exported since): anything else is a
// *review.RefusedError. The audit log records it with the configuration.
func (d *DB) CreateSearchIndex(ctx context.Context, actor User, name string, manifestID int64) (SearchIndex, error) {
	var x SearchIndex
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		m, err := loadManifest(ctx, tx, manifestID)
		if err != nil {
			return err
		}
		if m.State != review.SignedOff && m.State != review.Exported {
			return &review.RefusedError{Msg: fmt.Sprintf("manifest %d is %s: only a signed-off configuration can serve searches", m.ID, m.State.Label())}
		}
		params, err := json.Marshal(m.Params)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO search_indexes (name, manifest_id, manifest_hash, params, created_by, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, name, m.ID, m.ContentHash, string(params), actor.ID, d.stamp())
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if x, err = scanSearchIndex(tx.QueryRowContext(ctx, `SELECT `+searchIndexColumns+searchIndexFrom+` WHERE x.id = ?`, id)); err != nil {
			return err
		}
		return d.auditBy(ctx, tx, actor, "search_index.create", fmt.Sprintf("search_index:%d", id), map[string]any{
			"name": name, "manifest": m.ID, "manifest_hash": m.ContentHash, "parameters": m.Params})
	})
	if err != nil {
		return SearchIndex{}, fmt.Errorf("create search index from manifest %d: %w", manifestID, err)
	}
	return x, nil
}

// SearchIndexes lists every index with the number of documents it holds, oldest first.
func (d *DB) SearchIndexes(ctx context.Context) ([]SearchIndex, error) {
	xs, err := queryAll(ctx, d, `SELECT `+searchIndexColumns+`, (SELECT count(*) FROM search_documents s WHERE s.index_id = x.id)`+
		searchIndexFrom+` ORDER BY x.id`, func(sc scanner) (SearchIndex, error) {
		var n int
		x, err := scanSearchIndex(multiScan{sc, []any{&n}})
		x.Docs = n
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("search indexes: %w", err)
	}
	return xs, nil
}

// SearchIndexByID returns index id (its Docs left 0); ErrNotFound when there is none.
func (d *DB) SearchIndexByID(ctx context.Context, id int64) (SearchIndex, error) {
	x, err := scanSearchIndex(d.r.QueryRowContext(ctx, `SELECT `+searchIndexColumns+searchIndexFrom+` WHERE x.id = ?`, id))
	if err != nil {
		return x, fmt.Errorf("search index %d: %w", id, err)
	}
	return x, nil
}

// SearchDoc is a document an index holds: the caller's id, its signature and, under
// exact verification, its sorted shingle-hash set (nil otherwise).
type SearchDoc struct {
	ID        string
	Signature lsh.Signature
	Shingles  []uint64
}

// InsertSearchDocs stores docs in index indexID, all or none, in one transaction: when
// it returns nil they are on disk (synchronous=FULL). An id the index holds already is
// ErrConflict, and nothing is stored.
func (d *DB) InsertSearchDocs(ctx context.Context, indexID int64, docs []SearchDoc) error {
	if len(docs) == 0 {
		return nil
	}
	err := d.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO search_documents (index_id, doc_id, signature, shingles, inserted_at) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		now := d.stamp()
		for _, doc := range docs {
			_, err := stmt.ExecContext(ctx, indexID, doc.ID, doc.Signature.Bytes(), shingleBytes(doc.Shingles), now)
			if isUnique(err) {
				return fmt.Errorf("document %q: %w", doc.ID, ErrConflict)
			}
			if err != nil {
				return fmt.Errorf("document %q: %w", doc.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("insert %d documents into search index %d: %w", len(docs), indexID, err)
	}
	return nil
}

// EachSearchDoc calls fn with every document of index indexID in the order they were
// inserted; an error from fn stops it and is returned.
func (d *DB) EachSearchDoc(ctx context.Context, indexID int64, fn func(SearchDoc) error) error {
	rows, err := d.r.QueryContext(ctx, `SELECT doc_id, signature, shingles FROM search_documents WHERE index_id = ? ORDER BY seq`, indexID)
	if err != nil {
		return fmt.Errorf("documents of search index %d: %w", indexID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc SearchDoc
		var sig, sh []byte
		if err := rows.Scan(&doc.ID, &sig, &sh); err != nil {
			return fmt.Errorf("documents of search index %d: %w", indexID, err)
		}
		var ok bool
		if doc.Signature, ok = lsh.SignatureFromBytes(sig); !ok {
			return fmt.Errorf("search index %d document %q: signature of %d bytes", indexID, doc.ID, len(sig))
		}
		if doc.Shingles, ok = shinglesFromBytes(sh); !ok {
			return fmt.Errorf("search index %d document %q: shingle set of %d bytes", indexID, doc.ID, len(sh))
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("documents of search index %d: %w", indexID, err)
	}
	return nil
}

// shingleBytes is a shingle-hash set as stored: little-endian uint64s.
func shingleBytes(set []uint64) []byte {
	out := make([]byte, 8*len(set))
	for i, v := range set {
		binary.LittleEndian.PutUint64(out[8*i:], v)
	}
	return out
}

func shinglesFromBytes(b []byte) ([]uint64, bool) {
	if len(b)%8 != 0 {
		return nil, false
	}
	if len(b) == 0 {
		return nil, true
	}
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out, true
}
