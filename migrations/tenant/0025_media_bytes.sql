-- instance_counters.media_bytes follows the stored files of
-- media_attachments (file_size + preview_size) in the same transaction as
-- the row: an upload, its processing (the original and preview replace the
-- raw upload), a failure (sizes back to 0) and any delete, including the
-- cascade of an account's or a status's removal, move it. The upload quota
-- (src/api/media.c) reads this one row instead of summing files.
CREATE FUNCTION eunha_media_bytes() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    d bigint := 0;
    tid bigint;
BEGIN
    IF TG_OP <> 'DELETE' THEN
        d := NEW.file_size + NEW.preview_size;
        tid := NEW.tenant_id;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        d := d - OLD.file_size - OLD.preview_size;
        tid := OLD.tenant_id;
    END IF;
    IF d <> 0 THEN
        INSERT INTO instance_counters AS c (tenant_id, media_bytes) VALUES (tid, greatest(d, 0))
        ON CONFLICT (tenant_id) DO UPDATE SET media_bytes = greatest(c.media_bytes + d, 0);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER media_attachments_bytes
    AFTER INSERT OR DELETE OR UPDATE OF file_size, preview_size ON media_attachments
    FOR EACH ROW EXECUTE FUNCTION eunha_media_bytes();
