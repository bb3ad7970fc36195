-- The Account entity's roles (Mastodon shows a local user's role there
-- when the role is highlighted: id, name, color), kept on the account's
-- row so every read of an account (and the render cache, stamped by the
-- row's xmin) has it without a join: NULL when there is none. Triggers keep
-- it when a user's role changes or a role itself does.

-- Tenant p_tenant's badge for role p_role: NULL unless it is highlighted.
CREATE FUNCTION eunha_role_badge(p_tenant bigint, p_role bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_role IS NULL THEN NULL ELSE
        (SELECT jsonb_build_array(jsonb_build_object('id', r.id::text, 'name', r.name,
                                                     'color', r.color))
         FROM eunha_role(p_tenant, p_role) r WHERE r.highlighted) END
$$;

ALTER TABLE accounts ADD COLUMN roles jsonb;

CREATE FUNCTION eunha_user_role_badge() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE accounts a SET roles = eunha_role_badge(NEW.tenant_id, NEW.role_id)
        WHERE a.tenant_id = NEW.tenant_id AND a.id = NEW.account_id
        AND a.roles IS DISTINCT FROM eunha_role_badge(NEW.tenant_id, NEW.role_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER users_role_badge AFTER INSERT OR UPDATE OF role_id ON users
    FOR EACH ROW EXECUTE FUNCTION eunha_user_role_badge();

-- A role renamed, recoloured, (un)highlighted or removed changes its
-- holders' badges; roles change rarely and have few holders.
CREATE FUNCTION eunha_role_badges() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    UPDATE accounts a SET roles = eunha_role_badge(r.tenant_id, u.role_id)
        FROM users u WHERE u.tenant_id = r.tenant_id AND u.role_id = r.id
        AND a.tenant_id = r.tenant_id AND a.id = u.account_id
        AND a.roles IS DISTINCT FROM eunha_role_badge(r.tenant_id, u.role_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER user_roles_badges AFTER INSERT OR UPDATE OR DELETE ON user_roles
    FOR EACH ROW EXECUTE FUNCTION eunha_role_badges();

UPDATE accounts a SET roles = eunha_role_badge(u.tenant_id, u.role_id)
    FROM users u WHERE u.tenant_id = a.tenant_id AND u.account_id = a.id
    AND u.role_id IS NOT NULL;
