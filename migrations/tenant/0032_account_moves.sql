-- When a local account last moved away (POST /api/v1/accounts/move,
-- src/api/migration.c): Mastodon allows one move per account every 30
-- days (AccountMigration::COOLDOWN_PERIOD), counted from the last one.
ALTER TABLE accounts ADD COLUMN moved_at timestamptz;
