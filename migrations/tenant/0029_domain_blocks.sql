-- Domain blocks. An account's own (Mastodon's AccountDomainBlock, through
-- /api/v1/domain_blocks) hide what accounts of that domain post from its
-- timelines and notifications (src/api/domain_blocks.c). A tenant's (the
-- operator's, Mastodon's admin DomainBlock, src/admin/domain_blocks.c)
-- limit or cut off a whole server for everyone on the tenant.

-- d and its parent domains, d first: 'a.b.example' gives {a.b.example,
-- b.example, example}. A tenant's block covers the subdomains of what it
-- names, as Mastodon's DomainBlock.rule_for does, and a lookup by
-- "domain = ANY(eunha_domain_suffixes(host))" stays an index probe per
-- label instead of a pattern scan.
CREATE FUNCTION eunha_domain_suffixes(d text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_agg(array_to_string(x.p[i:], '.') ORDER BY i)
    FROM (SELECT string_to_array(d, '.') AS p) x, generate_subscripts(x.p, 1) AS i
$$;

-- Exact domains only (a user blocks what they saw), as Mastodon's
-- domain_blocking? compares. The primary key's order is the lookup every
-- rendered status of a remote author makes: (viewer, author's domain).
CREATE TABLE account_domain_blocks (
    tenant_id bigint NOT NULL,
    account_id bigint NOT NULL,
    domain text NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, account_id, domain),
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
-- The list's pages walk ids.
CREATE UNIQUE INDEX account_domain_blocks_id ON account_domain_blocks (tenant_id, account_id, id);

-- A bound per account, so the table (and an account's list) cannot grow
-- without end; Mastodon has none, but a few thousand covers the blocklists
-- people import. SQLSTATE class EU is answered 422 with the message.
CREATE FUNCTION eunha_account_domain_block_cap() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM account_domain_blocks b WHERE b.tenant_id = NEW.tenant_id
        AND b.account_id = NEW.account_id) >= 5000 THEN
        RAISE EXCEPTION 'You cannot block more than 5000 domains' USING ERRCODE = 'EU003';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER account_domain_blocks_cap BEFORE INSERT ON account_domain_blocks
    FOR EACH ROW EXECUTE FUNCTION eunha_account_domain_block_cap();

-- The tenant's blocks, with Mastodon's admin DomainBlock fields. severity:
-- 'noop' records only (reject_media / reject_reports may still apply),
-- 'silence' keeps the domain's accounts off public timelines for those who
-- do not follow them, 'suspend' refuses its deliveries and signed fetches,
-- sends it nothing and hides its accounts and statuses.
CREATE TABLE domain_blocks (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    domain text NOT NULL,
    severity text NOT NULL DEFAULT 'silence' CHECK (severity IN ('noop', 'silence', 'suspend')),
    reject_media boolean NOT NULL DEFAULT false,
    reject_reports boolean NOT NULL DEFAULT false,
    private_comment text,
    public_comment text,
    obfuscate boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX domain_blocks_domain ON domain_blocks (tenant_id, domain);

-- Mastodon's silenced accounts (a domain's silence marks them, as a
-- suspension sets suspended_at). The mark carries the block's created_at,
-- so lifting the block clears exactly what it set, as Mastodon's
-- UnblockDomainService does.
ALTER TABLE accounts ADD COLUMN silenced_at timestamptz;

-- A remote account first seen after its domain was blocked starts
-- suspended or silenced, whichever path made it (inbox, search, import).
CREATE FUNCTION eunha_account_domain_policy() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    b record;
BEGIN
    IF NEW.domain IS NULL THEN
        RETURN NEW;
    END IF;
    FOR b IN SELECT d.severity, d.created_at FROM domain_blocks d
             WHERE d.tenant_id = NEW.tenant_id
             AND d.domain = ANY(eunha_domain_suffixes(lower(NEW.domain)))
             AND d.severity <> 'noop' LOOP
        IF b.severity = 'suspend' AND NEW.suspended_at IS NULL THEN
            NEW.suspended_at := b.created_at;
        ELSIF b.severity = 'silence' AND NEW.silenced_at IS NULL THEN
            NEW.silenced_at := b.created_at;
        END IF;
    END LOOP;
    RETURN NEW;
END
$$;
CREATE TRIGGER accounts_domain_policy BEFORE INSERT ON accounts
    FOR EACH ROW EXECUTE FUNCTION eunha_account_domain_policy();

-- Refusals (0023) now hold back new deliveries to the host for a while
-- (src/ap/deliver.c): how many were skipped, and the last one.
ALTER TABLE delivery_refusals ADD COLUMN skipped integer NOT NULL DEFAULT 0;
ALTER TABLE delivery_refusals ADD COLUMN last_skipped_at timestamptz;
