-- Filters are compiled once per account and the compiled form is reused
-- while the stamp of the account's filters (their ids and row versions,
-- EU_FILTERS_STAMP_SQL in include/eunha/filters.h) stays the same. A change
-- to a keyword or a filtered status must then change its filter's row
-- version too: these triggers rewrite the filter's row after any statement
-- that writes either, by whatever path (API, import, psql).

CREATE FUNCTION eunha_filter_touch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE filters f SET title = f.title
    FROM (SELECT DISTINCT tenant_id, filter_id FROM changed) c
    WHERE f.tenant_id = c.tenant_id AND f.id = c.filter_id;
    RETURN NULL;
END
$$;

-- An update may move a row to another filter; both are touched.
CREATE FUNCTION eunha_filter_touch_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE filters f SET title = f.title
    FROM (SELECT tenant_id, filter_id FROM changed UNION SELECT tenant_id, filter_id FROM was) c
    WHERE f.tenant_id = c.tenant_id AND f.id = c.filter_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER filter_keywords_touch_insert AFTER INSERT ON filter_keywords
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION eunha_filter_touch();
CREATE TRIGGER filter_keywords_touch_update AFTER UPDATE ON filter_keywords
    REFERENCING NEW TABLE AS changed OLD TABLE AS was
    FOR EACH STATEMENT EXECUTE FUNCTION eunha_filter_touch_update();
CREATE TRIGGER filter_keywords_touch_delete AFTER DELETE ON filter_keywords
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION eunha_filter_touch();
CREATE TRIGGER filter_statuses_touch_insert AFTER INSERT ON filter_statuses
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION eunha_filter_touch();
CREATE TRIGGER filter_statuses_touch_update AFTER UPDATE ON filter_statuses
    REFERENCING NEW TABLE AS changed OLD TABLE AS was
    FOR EACH STATEMENT EXECUTE FUNCTION eunha_filter_touch_update();
CREATE TRIGGER filter_statuses_touch_delete AFTER DELETE ON filter_statuses
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION eunha_filter_touch();

-- Every page of a viewer with filters reads their stamp, and loading them
-- reads each filter's keywords and statuses: index both lookups rather
-- than scan the tenant's rows.
CREATE INDEX filters_account ON filters (tenant_id, account_id);
CREATE INDEX filter_keywords_filter ON filter_keywords (tenant_id, filter_id);
CREATE INDEX filter_statuses_filter ON filter_statuses (tenant_id, filter_id);
