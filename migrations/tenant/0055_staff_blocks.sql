-- What a tenant's staff block besides other servers (src/api/staff_blocks.c,
-- docs/blocks.md): the servers allowed to federate when the tenant is in
-- limited-federation mode, e-mail domains and canonical e-mail addresses
-- that may not sign up, and IP ranges that may not sign up or sign in.
-- Each table has Mastodon's model's fields; the admin API pages on id.

-- Mastodon's DomainAllow. They matter only while the tenant's 'instance'
-- setting has limited_federation_mode true: then only these domains (and
-- their subdomains) federate with it, as DomainAllow.allowed? decides
-- (EU_DOMAIN_REFUSED in include/eunha/domainblock.h).
CREATE TABLE domain_allows (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    domain text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX domain_allows_domain ON domain_allows (tenant_id, domain);

-- Mastodon's EmailDomainBlock: a sign-up with an address at domain, or at
-- one of its subdomains, is refused (ERR_BLOCKED on email).
CREATE TABLE email_domain_blocks (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    domain text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX email_domain_blocks_domain ON email_domain_blocks (tenant_id, domain);

-- Mastodon's CanonicalEmailBlock: the SHA-256 (hex) of an address in its
-- canonical form (eunha_canonical_email_hash), so that a.b+x@example and
-- ab@example are one address, and the address itself is not kept.
CREATE TABLE canonical_email_blocks (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    canonical_email_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX canonical_email_blocks_hash
    ON canonical_email_blocks (tenant_id, canonical_email_hash);

-- Mastodon's IpBlock. ip is a network (a single address is a /32 or
-- /128); severity sign_up_requires_approval puts sign-ups from it into
-- approval, sign_up_block refuses them, no_access also refuses signing in.
-- A block past expires_at does nothing (and is not listed). A tenant has
-- few: the check walks the tenant's rows by the primary key.
CREATE TABLE ip_blocks (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    ip inet NOT NULL,
    severity text NOT NULL
        CHECK (severity IN ('sign_up_requires_approval', 'sign_up_block', 'no_access')),
    comment text NOT NULL DEFAULT '',
    expires_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX ip_blocks_ip ON ip_blocks (tenant_id, ip);

-- Mastodon's email_to_canonical_email_hash: lower-cased, the local part
-- without its dots and without what follows a '+', then SHA-256 in hex.
CREATE FUNCTION eunha_canonical_email_hash(e text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT encode(sha256(convert_to(
        split_part(replace(split_part(lower(e), '@', 1), '.', ''), '+', 1) || '@'
        || CASE WHEN strpos(lower(e), '@') > 0 THEN substr(lower(e), strpos(lower(e), '@') + 1)
           ELSE '' END,
        'UTF8')), 'hex')
$$;
