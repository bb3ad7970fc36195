-- The account's life, what issue 29 left (src/api/takeout.c): an
-- uploaded import waits as 'unconfirmed' until its owner confirms it on
-- its page, as Mastodon 4.2's BulkImport does; only then is it
-- 'scheduled' and its job queued. An unconfirmed import that is never
-- confirmed stays until its owner cancels it (its rows go with it).
ALTER TABLE bulk_imports DROP CONSTRAINT bulk_imports_state_check;
ALTER TABLE bulk_imports ADD CONSTRAINT bulk_imports_state_check
    CHECK (state IN ('unconfirmed', 'scheduled', 'in_progress', 'finished'));
ALTER TABLE bulk_imports ALTER COLUMN state SET DEFAULT 'unconfirmed';
