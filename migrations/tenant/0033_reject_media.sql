-- reject_media on a tenant's domain block (0029): Mastodon neither
-- downloads nor keeps the domain's media (its attachments stay type
-- 'unknown' with only their remote_url, its accounts get no avatar or
-- header). Eunha never downloads remote media (clients load them from
-- their URL), so rejecting them means not pointing clients there either:
-- attachments of such a domain are stored 'unknown' (rendered with no url,
-- remote_url kept, as Mastodon's web client then shows a link) and its
-- accounts keep no avatar_url or header_url. Triggers, so every path that
-- writes remote rows (inbox, search, resolve, edits) obeys the block.

-- Whether tenant t rejects the media of domain d or of a parent domain:
-- one index probe of domain_blocks (tenant_id, domain) per label.
CREATE FUNCTION eunha_domain_rejects_media(t bigint, d text) RETURNS boolean
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
    SELECT EXISTS (SELECT 1 FROM domain_blocks b WHERE b.tenant_id = t
                   AND b.domain = ANY(eunha_domain_suffixes(lower(d))) AND b.reject_media)
$$;

CREATE FUNCTION eunha_account_reject_media() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF eunha_domain_rejects_media(NEW.tenant_id, NEW.domain) THEN
        NEW.avatar_url := NULL;
        NEW.header_url := NULL;
    END IF;
    RETURN NEW;
END
$$;
-- Only a remote account with an image to keep pays the probe.
CREATE TRIGGER accounts_reject_media BEFORE INSERT OR UPDATE OF avatar_url, header_url, domain
    ON accounts FOR EACH ROW
    WHEN (NEW.domain IS NOT NULL AND (NEW.avatar_url IS NOT NULL OR NEW.header_url IS NOT NULL))
    EXECUTE FUNCTION eunha_account_reject_media();

CREATE FUNCTION eunha_media_reject_media() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM accounts a WHERE a.tenant_id = NEW.tenant_id
               AND a.id = NEW.account_id AND a.domain IS NOT NULL
               AND eunha_domain_rejects_media(a.tenant_id, a.domain)) THEN
        NEW.type := 'unknown';
    END IF;
    RETURN NEW;
END
$$;
-- Local uploads (no remote_url) never pay the probe.
CREATE TRIGGER media_attachments_reject_media BEFORE INSERT ON media_attachments
    FOR EACH ROW WHEN (NEW.remote_url IS NOT NULL AND NEW.type <> 'unknown')
    EXECUTE FUNCTION eunha_media_reject_media();
