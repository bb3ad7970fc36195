-- Attachments where they are used (statuses, scheduled statuses, edit
-- history) and the removal of what nobody uses.

-- A scheduled status holds its media until it is published, so they are
-- neither attachable elsewhere nor removed as unattached uploads.
ALTER TABLE media_attachments ADD COLUMN scheduled_status_id bigint;

-- Each version in a status's edit history keeps the media it showed, in
-- order, with the descriptions they had then (Mastodon's
-- ordered_media_attachment_ids and media_descriptions). A media removed by
-- an edit stays attached to its status with position -1, so old versions
-- still render it; the status entity shows position >= 0 only.
ALTER TABLE status_edits ADD COLUMN media_ids bigint[] NOT NULL DEFAULT '{}';
ALTER TABLE status_edits ADD COLUMN media_descriptions text[] NOT NULL DEFAULT '{}';

-- The rendered-entity cache (src/api/render_cache.c) keeps a status's
-- entity, media included, while the status row's xmin stays the same. A
-- change to a media that is already attached (description or focus through
-- PUT /api/v1/media/:id, processing finishing) must then give its status a
-- new row version, by whatever path it is made.
CREATE FUNCTION eunha_media_touch_status() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE statuses s SET updated_at = now()
    FROM (SELECT DISTINCT n.tenant_id, n.status_id FROM changed n
          JOIN was o ON o.tenant_id = n.tenant_id AND o.id = n.id
          WHERE n.status_id IS NOT NULL AND n.status_id = o.status_id
          AND n.position = o.position
          AND (n.description IS DISTINCT FROM o.description OR n.focus_x <> o.focus_x
               OR n.focus_y <> o.focus_y OR n.state <> o.state OR n.meta <> o.meta
               OR n.blurhash IS DISTINCT FROM o.blurhash
               OR n.file_key IS DISTINCT FROM o.file_key
               OR n.preview_key IS DISTINCT FROM o.preview_key)) c
    WHERE s.tenant_id = c.tenant_id AND s.id = c.status_id;
    RETURN NULL;
END
$$;
CREATE TRIGGER media_attachments_touch_status AFTER UPDATE ON media_attachments
    REFERENCING NEW TABLE AS changed OLD TABLE AS was
    FOR EACH STATEMENT EXECUTE FUNCTION eunha_media_touch_status();

-- The queue's placement poll asks, across a placement's tenants, when the
-- oldest unattached upload turns a day old (src/media/cleanup.c).
CREATE INDEX media_attachments_unattached_placement ON media_attachments (created_at)
    WHERE status_id IS NULL AND scheduled_status_id IS NULL;
CREATE INDEX media_attachments_scheduled ON media_attachments (tenant_id, scheduled_status_id)
    WHERE scheduled_status_id IS NOT NULL;
