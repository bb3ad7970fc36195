-- When the Delete of a local actor was queued (src/ap/delete_actor.c): by
-- its owner's deletion, or by the cleanup before a staff suspension is
-- purged. The purge waits a grace after it, so the deliveries can still
-- be signed with the account's key (src/queue/accounts.c).
ALTER TABLE accounts ADD COLUMN delete_sent_at timestamptz;
