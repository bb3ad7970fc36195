-- A tenant's media storage quota in bytes (src/api/media.c): NULL follows
-- [media] default_quota_bytes in the config, so an operator changes every
-- tenant's at once; 0 is unlimited. The usage it is held to is the tenant's
-- instance_counters.media_bytes in its placement.
ALTER TABLE tenants ADD COLUMN media_quota_bytes bigint CHECK (media_quota_bytes >= 0);
