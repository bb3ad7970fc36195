-- What processing received activities needs (src/ap/process*.c).
--
-- follows.uri and follow_requests.uri (0002) hold the Follow activity's id:
-- the remote one for a remote follower (so its Undo, and our Accept, can
-- name it), ours for a local account's follow of a remote one (so the
-- peer's Accept or Reject finds it). A Like's id is kept the same way, so
-- an Undo naming only the Like's id finds the favourite.
ALTER TABLE favourites ADD COLUMN IF NOT EXISTS uri text;

-- Reports (Mastodon's Flag): reporter, reported account, the statuses it
-- names and the comment. A remote Flag's id (uri) makes a redelivery a
-- no-op.
CREATE TABLE IF NOT EXISTS reports (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    target_account_id bigint NOT NULL,
    status_ids bigint[] NOT NULL DEFAULT '{}',
    comment text NOT NULL DEFAULT '',
    uri text,
    action_taken_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX IF NOT EXISTS reports_uri ON reports (tenant_id, uri) WHERE uri IS NOT NULL;
CREATE INDEX IF NOT EXISTS reports_target ON reports (tenant_id, target_account_id);
