-- Every change of a tenant's row is announced on the channel
-- eunha_tenants with the tenant's id, so every eunha process sharing this
-- control database applies it within moments (src/app/app.c listens
-- through src/db/listen.c): a tenant created, renamed, suspended, moved or
-- deleted through one process's admin API is served accordingly by all.
CREATE OR REPLACE FUNCTION eunha_tenant_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('eunha_tenants',
                      (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END)::text);
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS tenants_changed ON tenants;
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE ON tenants
    FOR EACH ROW EXECUTE FUNCTION eunha_tenant_changed();
