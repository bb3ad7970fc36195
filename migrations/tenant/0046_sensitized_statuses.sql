-- A sensitized account's statuses are marked sensitive, as Mastodon's
-- post and ActivityPub create services mark them (@account.sensitized? ||
-- the client's flag): one rule for every path that writes a status (a
-- post, a scheduled one published, an incoming Create), so none can
-- forget it. A status already marked skips the probe; the author's row is
-- the one the insert locks or reads anyway, so the probe finds it cached.
CREATE FUNCTION eunha_status_sensitized() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM accounts a WHERE a.tenant_id = NEW.tenant_id
               AND a.id = NEW.account_id AND a.sensitized_at IS NOT NULL) THEN
        NEW.sensitive := true;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER statuses_sensitized BEFORE INSERT ON statuses
    FOR EACH ROW WHEN (NOT NEW.sensitive) EXECUTE FUNCTION eunha_status_sensitized();
