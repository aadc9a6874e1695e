-- Installed plugins and personal plugin sources.
CREATE TABLE plugins (
    id TEXT PRIMARY KEY,
    repo TEXT NOT NULL,
    version TEXT NOT NULL,
    type TEXT NOT NULL,                 -- integration | recipe
    source TEXT NOT NULL,               -- registry | personal
    manifest TEXT NOT NULL,             -- JSON object, as in the archive
    archive_sha256 TEXT NOT NULL,       -- the installed archive (kept under plugins/.archives/)
    pinned_sha256 TEXT,                 -- personal plugins: the hash the administrator approved
    enabled INTEGER NOT NULL DEFAULT 1,
    installed_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE plugin_sources (
    repo TEXT PRIMARY KEY,              -- owner/repo as added (trimmed)
    added_at INTEGER NOT NULL
);
