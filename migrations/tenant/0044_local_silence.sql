-- A tenant's staff may silence a local account now (issue 28), and
-- Mastodon's StatusFilter hides a silenced author from those who do not
-- follow it whatever its origin. The rule of migration 0040 applied the
-- silence to remote authors only (only a domain block silenced anyone).
-- The author still sees its own statuses. A local author that is not
-- silenced still costs no probe.
CREATE OR REPLACE FUNCTION eunha_not_domain_hidden(p_tenant bigint, p_author bigint,
                                                   p_domain text, p_silenced_at timestamptz,
                                                   p_viewer bigint)
RETURNS SETOF boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT true WHERE (p_domain IS NULL AND p_silenced_at IS NULL)
        OR ((p_domain IS NULL
             OR NOT EXISTS (SELECT 1 FROM account_domain_blocks xd WHERE xd.tenant_id = p_tenant
                            AND xd.account_id = p_viewer AND xd.domain = p_domain))
            AND (p_silenced_at IS NULL OR p_author = p_viewer
                 OR EXISTS (SELECT 1 FROM follows xf WHERE xf.tenant_id = p_tenant
                            AND xf.account_id = p_viewer AND xf.target_account_id = p_author)))
$$;

-- The same rule in its one-row form (migration 0042), which the statements
-- join.
CREATE OR REPLACE FUNCTION eunha_is_not_domain_hidden(p_tenant bigint, p_author bigint,
                                                      p_domain text, p_silenced_at timestamptz,
                                                      p_viewer bigint)
RETURNS TABLE (ok boolean) LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (p_domain IS NULL AND p_silenced_at IS NULL)
        OR ((p_domain IS NULL
             OR NOT EXISTS (SELECT 1 FROM account_domain_blocks xd WHERE xd.tenant_id = p_tenant
                            AND xd.account_id = p_viewer AND xd.domain = p_domain))
            AND (p_silenced_at IS NULL OR p_author = p_viewer
                 OR EXISTS (SELECT 1 FROM follows xf WHERE xf.tenant_id = p_tenant
                            AND xf.account_id = p_viewer AND xf.target_account_id = p_author)))
$$;
