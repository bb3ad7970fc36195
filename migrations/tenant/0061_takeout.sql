-- Taking one's data out and bringing it in (issue 29, part 5): Mastodon
-- 4.2's bulk imports of a CSV file (follows, blocks, mutes, domain
-- blocks, bookmarks, lists), run by the "bulk_import" job a few rows a
-- turn, with their progress for the settings page.

-- Mastodon's BulkImport: type and state as its enums' names, counters
-- the job moves (processed = imported + failed).
CREATE TABLE bulk_imports (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    type text NOT NULL CHECK (type IN ('following', 'blocking', 'muting', 'domain_blocking',
                                       'bookmarks', 'lists')),
    state text NOT NULL DEFAULT 'scheduled'
        CHECK (state IN ('scheduled', 'in_progress', 'finished')),
    overwrite boolean NOT NULL DEFAULT false,
    original_filename text NOT NULL DEFAULT '',
    likely_mismatched boolean NOT NULL DEFAULT false,
    total_items integer NOT NULL DEFAULT 0,
    processed_items integer NOT NULL DEFAULT 0,
    imported_items integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
-- The settings page lists an account's imports, newest first.
CREATE INDEX bulk_imports_account ON bulk_imports (tenant_id, account_id, id);

-- Mastodon's BulkImportRow: one CSV row as an object (acct, show_reblogs,
-- notify, languages, hide_notifications, domain, uri, list_name), removed
-- once the job has done it.
CREATE TABLE bulk_import_rows (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    bulk_import_id bigint NOT NULL,
    data jsonb NOT NULL,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, bulk_import_id) REFERENCES bulk_imports (tenant_id, id)
        ON DELETE CASCADE
);
CREATE INDEX bulk_import_rows_import ON bulk_import_rows (tenant_id, bulk_import_id, id);

-- Mastodon's Backup: an archive of an account's posts, likes, bookmarks,
-- actor and media, asked for at most once every 7 days, built by the
-- "takeout_archive" job into the media store (file_key) and removed with
-- its file 7 days after it was asked for.
CREATE TABLE backups (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    file_key text,
    file_size bigint NOT NULL DEFAULT 0,
    processed boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX backups_account ON backups (tenant_id, account_id, id);
