-- Polls and votes over federation (issue 13).
--
-- A remote poll (a Question stored with its status) keeps the counts its
-- origin reports: cached_tallies, one per option, and cached_voters
-- (votersCount). Local polls leave both NULL and count poll_votes. A local
-- account's vote on a remote poll is a poll_votes row as well, and adds
-- itself to the cached counts until the origin's next Update says better.
ALTER TABLE polls ADD COLUMN IF NOT EXISTS cached_tallies integer[];
ALTER TABLE polls ADD COLUMN IF NOT EXISTS cached_voters integer;

-- The inbox's per-sending-host cap (src/ap/inbox.c) counts the ap_inbox
-- jobs still waiting from one host (payload "host") at every delivery; this
-- keeps that a short index scan however long the queue.
CREATE INDEX IF NOT EXISTS jobs_inbox_host ON jobs (tenant_id, (payload ->> 'host'))
    WHERE kind = 'ap_inbox' AND state = 'ready';
