-- Every refresh token a session rotated away, so that replaying any of them (not just the last)
-- is recognised as theft and ends the session. Rows go with their session.
CREATE TABLE refresh_history (
    token_hash TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE
);
CREATE INDEX refresh_history_session ON refresh_history(session_id);
INSERT INTO refresh_history (token_hash, session_id)
    SELECT previous_hash, id FROM sessions WHERE previous_hash IS NOT NULL;
DROP INDEX sessions_previous;
ALTER TABLE sessions DROP COLUMN previous_hash;
