-- Reports made through POST /api/v1/reports (src/api/reports.c) carry
-- what Mastodon's Report entity shows besides the comment: the category
-- the reporter chose and whether the report was forwarded to the reported
-- account's server as a Flag.
ALTER TABLE reports ADD COLUMN IF NOT EXISTS category text NOT NULL DEFAULT 'other';
ALTER TABLE reports ADD COLUMN IF NOT EXISTS forwarded boolean NOT NULL DEFAULT false;
