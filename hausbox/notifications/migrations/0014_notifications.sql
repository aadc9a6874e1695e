-- Notification publishers (a channel each: telegram, webhook, webpush), their mappings, and the
-- web push subscriptions of users' browsers.
CREATE TABLE notification_publishers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    channel_type TEXT NOT NULL,
    channel_config TEXT NOT NULL,               -- JSON object; holds channel secrets (admin-only)
    enabled INTEGER NOT NULL DEFAULT 1,
    forward_alarms INTEGER NOT NULL DEFAULT 0,  -- system alarms raised and resolved are sent too
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE notification_mappings (
    id TEXT PRIMARY KEY,
    publisher_id TEXT NOT NULL REFERENCES notification_publishers(id) ON DELETE CASCADE,
    message TEXT NOT NULL,
    source_type TEXT NOT NULL,
    source_id TEXT NOT NULL,
    source_key TEXT NOT NULL,
    throttle_ms INTEGER NOT NULL DEFAULT 300000,
    created_at INTEGER NOT NULL,
    UNIQUE (publisher_id, source_type, source_id, source_key)
);

CREATE TABLE push_subscriptions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    endpoint TEXT NOT NULL UNIQUE,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX push_subscriptions_user ON push_subscriptions(user_id);
