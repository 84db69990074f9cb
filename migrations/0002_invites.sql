-- One-time invite links: an admin invites a person with a role; the link is used once.
CREATE TABLE invites (
    token_hash BLOB PRIMARY KEY,
    role       TEXT NOT NULL CHECK (role IN ('annotator', 'reviewer', 'approver', 'admin')),
    note       TEXT NOT NULL DEFAULT '',
    created_by INTEGER NOT NULL REFERENCES users (id),
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT,
    used_by    INTEGER REFERENCES users (id)
) STRICT;
