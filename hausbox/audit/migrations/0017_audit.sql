-- The audit trail: one row per mutating API request and per sign-in step (hausbox/audit). Never a
-- body value or a secret: who (from the credential, or the name an anonymous attempt gave), what
-- (method, route template, action, the path parameters), from where, and how it ended.
CREATE TABLE audit_entries (
    id INTEGER PRIMARY KEY,           -- rowid: grows in write order, the tie-break of the cursor
    ts INTEGER NOT NULL,              -- ms since the epoch, engine clock, when the request ended
    user_id TEXT,
    username TEXT,
    role TEXT,
    credential TEXT,                  -- 'jwt' | 'api_token' | NULL (anonymous)
    method TEXT NOT NULL,
    route TEXT,                       -- the route template, e.g. /zones/<id>; NULL when no route matched
    action TEXT,                      -- METHOD and pattern, e.g. PUT /zones/*; NULL when no route matched
    target TEXT,                      -- JSON object of the path parameters, or NULL
    outcome TEXT NOT NULL,
    status INTEGER NOT NULL,
    address TEXT,
    user_agent TEXT
);
-- Newest first with the (ts, id) cursor, and the filters (each walked in ts order too).
CREATE INDEX audit_entries_ts ON audit_entries(ts, id);
CREATE INDEX audit_entries_username ON audit_entries(username, ts);
CREATE INDEX audit_entries_user_id ON audit_entries(user_id, ts);
CREATE INDEX audit_entries_action ON audit_entries(action, ts);
CREATE INDEX audit_entries_outcome ON audit_entries(outcome, ts);
