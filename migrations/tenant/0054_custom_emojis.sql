-- Custom emoji (issue 28, item 5): a tenant's own, which its staff upload
-- through /api/v1/admin/custom_emojis (src/api/custom_emojis.c), and the
-- remote ones that incoming activities name in their tag (src/ap/), one
-- row per shortcode and domain, as Mastodon's custom_emojis table.
--
-- A local emoji's image and static columns hold store keys (the original
-- and its still version), which the renderer turns into the store's URL,
-- so a domain or store change moves nothing; a remote one's hold the URL
-- its server gave (Mastodon shows that while the file is not cached).
CREATE TABLE custom_emojis (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    shortcode text NOT NULL CHECK (shortcode ~ '^[a-zA-Z0-9_]{2,}$' AND length(shortcode) <= 128),
    domain text, -- NULL: the tenant's own
    image text NOT NULL,
    static_image text NOT NULL,
    content_type text,
    file_size integer,
    uri text,
    image_remote_url text,
    category text CHECK (length(category) <= 64),
    visible_in_picker boolean NOT NULL DEFAULT true,
    disabled boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
-- One emoji a shortcode and domain; coalesce so that the local ones (NULL)
-- are unique too, and so that the renderer's probe by (domain, shortcode)
-- is one index read.
CREATE UNIQUE INDEX custom_emojis_shortcode
    ON custom_emojis (tenant_id, coalesce(domain, ''), shortcode);

-- The emoji a text uses, as a JSON array (text) of objects the renderer
-- reads (eu_custom_emojis_json()): shortcode, image, static_image,
-- visible_in_picker, category, and for ActivityPub's Emoji tag (a local
-- status's Note) id, content_type and updated_at. p_domain is the
-- author's ('' for a local one): an account's text uses the emoji of its
-- own server, as Mastodon's EntityCache looks them up. NULL when none is
-- known. The closing colon is looked ahead at, not taken, so that
-- ":a::b:" names both. A function called as one (STRICT, not inlined: its sub-select
-- would keep any function that held it from being inlined), and only
-- through eunha_emojis_in() below, which calls it only for a text that
-- names an emoji at all.
CREATE FUNCTION eunha_emojis_of(p_tenant bigint, p_domain text, p_text text) RETURNS text
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
    SELECT json_agg(json_build_object('id', e.id::text, 'shortcode', e.shortcode,
                                      'image', e.image, 'static_image', e.static_image,
                                      'visible_in_picker', e.visible_in_picker,
                                      'category', e.category, 'content_type', e.content_type,
                                      'updated_at', eunha_ts(e.updated_at))
                    ORDER BY e.shortcode)::text
    FROM custom_emojis e
    WHERE e.tenant_id = p_tenant AND coalesce(e.domain, '') = p_domain
        AND e.shortcode = ANY(ARRAY(SELECT m[1] FROM regexp_matches(p_text,
                                    ':([a-zA-Z0-9_]{2,})(?=:)', 'g') m))
        AND NOT e.disabled
$$;

-- eunha_emojis_of() for the author of domain p_domain (NULL local), or
-- NULL at once for a text that names no emoji: the common text costs one
-- regular expression and no call. Inlined (0040's conventions) into the
-- statements that render accounts and statuses.
CREATE FUNCTION eunha_emojis_in(p_tenant bigint, p_domain text, p_text text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_text ~ ':[a-zA-Z0-9_]{2,}:'
                THEN eunha_emojis_of(p_tenant, coalesce(p_domain, ''), p_text) END
$$;

-- The Account entity's emojis: those its display name, bio and fields use
-- (Mastodon's Account#emojis), beside the fields eunha_account() gives,
-- under the name the C side reads (account_emojis). The three statements
-- that write the fields out (status_render.statuses, statuses.insert and
-- statuses.insert_plain) name it the same way.
ALTER TYPE eunha_account_entity ADD ATTRIBUTE account_emojis text;

CREATE OR REPLACE FUNCTION eunha_account(a accounts) RETURNS eunha_account_entity
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT ROW(a.id, a.username, a.domain, a.display_name, a.note, a.url, a.uri, a.avatar_url,
               a.header_url, a.locked, a.bot, a.discoverable, a.fields::text,
               to_char(date_trunc('day', a.created_at AT TIME ZONE 'UTC'),
                       'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               a.followers_count, a.following_count, a.statuses_count,
               to_char(a.last_status_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
               a.suspended_at IS NOT NULL, a.roles::text,
               eunha_emojis_in(a.tenant_id, a.domain,
                               a.display_name || ' ' || a.note || ' ' || a.fields::text)
              )::eunha_account_entity
$$;
