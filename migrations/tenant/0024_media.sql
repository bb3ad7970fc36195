-- Media attachments (src/media/, src/api/media.c). An upload is stored as
-- it came, then processed in the jobs on the CPU pool; until then state is
-- 'processing' and the API answers 206 for it. A row with status_id NULL is
-- unattached: its owner may still attach, edit or delete it, and one older
-- than a day is removed with its files. Remote attachments (federation)
-- have remote_url and no files of ours unless cached.
CREATE TABLE media_attachments (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    status_id bigint,
    position smallint NOT NULL DEFAULT 0, -- order within its status
    type text NOT NULL DEFAULT 'unknown' CHECK (type IN ('image', 'gifv', 'video', 'audio', 'unknown')),
    state text NOT NULL DEFAULT 'processing' CHECK (state IN ('processing', 'ready', 'failed')),
    description text,
    focus_x real NOT NULL DEFAULT 0,
    focus_y real NOT NULL DEFAULT 0,
    blurhash text,
    -- meta as Mastodon renders it: {"original": {...}, "small": {...}};
    -- focus is added from the columns at render time.
    meta jsonb NOT NULL DEFAULT '{}',
    file_key text,           -- store key of the original (mediastore.h)
    file_content_type text,
    file_size bigint NOT NULL DEFAULT 0,
    preview_key text,        -- store key of the WebP preview
    preview_size bigint NOT NULL DEFAULT 0,
    remote_url text,         -- a remote attachment's own URL
    processing_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX media_attachments_status ON media_attachments (tenant_id, status_id, position)
    WHERE status_id IS NOT NULL;
CREATE INDEX media_attachments_unattached ON media_attachments (tenant_id, created_at)
    WHERE status_id IS NULL;

-- Bytes of stored files per tenant, kept in the same transaction as the
-- row that adds or frees them, so the quota check and the admin API read
-- one row instead of summing files.
ALTER TABLE instance_counters ADD COLUMN IF NOT EXISTS media_bytes bigint NOT NULL DEFAULT 0;
