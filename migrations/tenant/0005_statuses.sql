-- Statuses group: one live reblog per account and status (so two taps on
-- "boost" make one), and the indexes the timelines walk.
CREATE UNIQUE INDEX statuses_one_reblog ON statuses (tenant_id, account_id, reblog_of_id)
    WHERE reblog_of_id IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX statuses_local_public ON statuses (tenant_id, id DESC)
    WHERE deleted_at IS NULL AND visibility = 0 AND reblog_of_id IS NULL AND local;
CREATE INDEX status_pins_account ON status_pins (tenant_id, account_id, id DESC);
CREATE INDEX favourites_status_id ON favourites (tenant_id, status_id, id DESC);
