-- The staff's dashboard (POST /api/v1/admin/measures, dimensions,
-- retention) and trends with their review (src/api/admin_dashboard.c,
-- src/api/trends.c, docs/dashboard.md).
--
-- Most rows the dashboard counts carry a snowflake id (milliseconds << 16,
-- migration 0001), so a day's rows are a range of the primary key: these
-- two functions turn a day into its first id and an id into its day (UTC).
-- Both are one expression, written to be inlined into the statements.
CREATE FUNCTION eunha_day_first_id(d date) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (extract(epoch FROM d::timestamp) * 1000)::bigint << 16
$$;

CREATE FUNCTION eunha_id_day(id bigint) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (timestamp 'epoch' + ((id >> 16) * interval '1 millisecond'))::date
$$;

-- resolved_reports counts by the day a report was closed, which no id
-- gives; instance_* measures and dimensions name a remote domain.
CREATE INDEX reports_resolved ON reports (tenant_id, action_taken_at)
    WHERE action_taken_at IS NOT NULL;
CREATE INDEX accounts_domain ON accounts (tenant_id, domain, id) WHERE domain IS NOT NULL;

-- The staff's review of trends, as Mastodon's Tag#trendable and
-- Status#trendable: NULL until reviewed (then a trend is not shown
-- publicly, Mastodon's default of requiring review), true once approved,
-- false once rejected.
ALTER TABLE tags ADD COLUMN trendable boolean,
    ADD COLUMN reviewed_at timestamptz;

CREATE TABLE status_trend_reviews (
    tenant_id bigint NOT NULL,
    status_id bigint NOT NULL,
    trendable boolean NOT NULL,
    reviewed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, status_id),
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE
);
