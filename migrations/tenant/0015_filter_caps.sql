-- Caps on what one account's filters may hold. Every rendered status is
-- matched against the viewer's keywords on the loop thread, so their number
-- and size bound the time a page can take; without caps one account's
-- 10,000 keywords added about 90 ms to each of its pages. The checks live
-- here so that every path that writes filters (v1, v2, keywords, import)
-- is held to them; statements that break one fail with SQLSTATE EU001 or
-- EU002, which the request layer answers with 422 and the message.

CREATE FUNCTION eunha_filter_cap() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM filters f WHERE f.tenant_id = NEW.tenant_id
        AND f.account_id = NEW.account_id) >= 100 THEN
        RAISE EXCEPTION 'You cannot have more than 100 filters' USING ERRCODE = 'EU001';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER filters_cap BEFORE INSERT ON filters
    FOR EACH ROW EXECUTE FUNCTION eunha_filter_cap();

-- After each statement that adds or changes keywords: the accounts it
-- touched may hold at most 300 keywords and 16 KiB of keyword text.
CREATE FUNCTION eunha_keyword_cap() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM (SELECT DISTINCT f.tenant_id, f.account_id FROM changed c
                       JOIN filters f ON f.tenant_id = c.tenant_id AND f.id = c.filter_id) a
        CROSS JOIN LATERAL (SELECT count(*) AS n, coalesce(sum(octet_length(k.keyword)), 0) AS b
                            FROM filters f JOIN filter_keywords k ON k.tenant_id = f.tenant_id
                            AND k.filter_id = f.id
                            WHERE f.tenant_id = a.tenant_id AND f.account_id = a.account_id) t
        WHERE t.n > 300 OR t.b > 16384) THEN
        RAISE EXCEPTION 'You cannot have more than 300 keywords or 16384 bytes of keywords in your filters'
            USING ERRCODE = 'EU002';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER filter_keywords_cap_insert AFTER INSERT ON filter_keywords
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION eunha_keyword_cap();
CREATE TRIGGER filter_keywords_cap_update AFTER UPDATE ON filter_keywords
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION eunha_keyword_cap();
