-- Users, login sessions (one row per refresh-token chain) and the settings store.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    username_key TEXT NOT NULL UNIQUE,          -- lower-cased username: logins are case-insensitive
    display_name TEXT NOT NULL DEFAULT '',
    password_hash TEXT NOT NULL,                -- bcrypt
    role TEXT NOT NULL DEFAULT 'standard' CHECK (role IN ('admin', 'standard')),
    enabled INTEGER NOT NULL DEFAULT 1,
    preferences TEXT NOT NULL DEFAULT '{}',     -- JSON object
    last_login_at INTEGER,                      -- ms since epoch
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,                        -- carried in access tokens as "sid"
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,            -- sha256 of the current refresh token
    previous_hash TEXT,                         -- sha256 of the token it replaced: reuse = theft
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    refreshed_at INTEGER NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX sessions_previous ON sessions(previous_hash);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,                        -- JSON-encoded scalar
    updated_at INTEGER NOT NULL
);
