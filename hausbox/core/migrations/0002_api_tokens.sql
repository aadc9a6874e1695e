-- Long-lived API tokens ("hbx_..."), stored as sha256 only.
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    expires_at INTEGER,
    last_used_at INTEGER,
    created_at INTEGER NOT NULL
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);
