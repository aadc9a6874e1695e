-- Multi-factor authentication (auth/mfa.py): one row per user who set up TOTP, their single-use
-- backup codes and the devices they chose to trust. Every row goes with its user.
CREATE TABLE user_mfa (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    secret TEXT,                                -- base32 TOTP secret once confirmed, else NULL
    pending_secret TEXT,                        -- a setup not confirmed yet: not active
    last_step INTEGER,                          -- last accepted TOTP time step: a code counts once
    enabled_at INTEGER,
    updated_at INTEGER NOT NULL
);

CREATE TABLE mfa_backup_codes (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,                    -- "<salt>$<sha256 hex of salt:code>"
    used_at INTEGER,                            -- single use: set when spent
    created_at INTEGER NOT NULL
);
CREATE INDEX mfa_backup_codes_user ON mfa_backup_codes(user_id);

CREATE TABLE mfa_trusted_devices (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,            -- sha256 of the token, shown once
    expires_at INTEGER NOT NULL,
    last_used_at INTEGER,
    created_at INTEGER NOT NULL
);
CREATE INDEX mfa_trusted_devices_user ON mfa_trusted_devices(user_id);
