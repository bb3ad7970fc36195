-- Preview cards of links in statuses and the trending links built on them
-- (issue 32, src/social/cards.c, src/api/cards.c, src/api/trends.c,
-- docs/cards.md).
--
-- A card is kept once per URL per tenant, not per placement: a card shared
-- by the placement's tenants would tell one tenant which links another's
-- users posted (it would already be there, fetched sooner), its image
-- would be charged to one tenant's quota and stored under one tenant's
-- files, and a tenant's reject_media blocks, removal and move could not
-- apply to it. The cost is fetching a popular page once per tenant that
-- posts it, which the outbound client's per-host limits keep polite.
CREATE TABLE preview_cards (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    url text NOT NULL,
    -- The host the card is from, as eu_fetch_host_of() writes it: the
    -- publisher of trending links (Mastodon's PreviewCardProvider).
    domain text NOT NULL,
    type text NOT NULL DEFAULT 'link' CHECK (type IN ('link', 'photo', 'video', 'rich')),
    title text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    author_name text NOT NULL DEFAULT '',
    author_url text NOT NULL DEFAULT '',
    provider_name text NOT NULL DEFAULT '',
    provider_url text NOT NULL DEFAULT '',
    html text NOT NULL DEFAULT '',
    width integer NOT NULL DEFAULT 0,
    height integer NOT NULL DEFAULT 0,
    embed_url text NOT NULL DEFAULT '',
    language text,
    published_at timestamptz,
    -- The image as stored (a key of the media store, WebP), its size
    -- (charged to instance_counters.media_bytes) and blurhash; NULL when
    -- the page named none or it could not be kept.
    image_key text,
    image_size bigint NOT NULL DEFAULT 0,
    image_description text NOT NULL DEFAULT '',
    blurhash text,
    -- The staff's review for trending links: NULL until reviewed, as
    -- tags.trendable (migration 0056).
    trendable boolean,
    reviewed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX preview_cards_url ON preview_cards (tenant_id, url);

-- Which card a status shows: one a status, as Mastodon shows one.
CREATE TABLE preview_cards_statuses (
    tenant_id bigint NOT NULL,
    status_id bigint NOT NULL,
    preview_card_id bigint NOT NULL,
    PRIMARY KEY (tenant_id, status_id),
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, preview_card_id) REFERENCES preview_cards (tenant_id, id)
        ON DELETE CASCADE
);
-- Trending links count a card's statuses of the last days.
CREATE INDEX preview_cards_statuses_card ON preview_cards_statuses
    (tenant_id, preview_card_id, status_id);

-- The staff's review of publishers (Mastodon's PreviewCardProvider): a
-- domain approved lets its links trend without each being reviewed.
CREATE TABLE preview_card_providers (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    domain text NOT NULL,
    trendable boolean,
    reviewed_at timestamptz,
    requested_review_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX preview_card_providers_domain ON preview_card_providers (tenant_id, domain);

-- A card's PreviewCard fields as the renderer reads them (src/social/
-- cards.c, eu_card_json()): the image as its store key, which the
-- renderer turns into a URL of the tenant's store; "id" for the staff's
-- trends. Reads no table: the row is the caller's.
CREATE FUNCTION eunha_card_json(c preview_cards) RETURNS json
LANGUAGE sql STABLE AS $$
    SELECT json_build_object('id', c.id::text, 'url', c.url, 'title', c.title,
        'description', c.description, 'language', c.language, 'type', c.type,
        'author_name', c.author_name, 'author_url', c.author_url,
        'provider_name', c.provider_name, 'provider_url', c.provider_url, 'html', c.html,
        'width', c.width, 'height', c.height, 'image_key', c.image_key,
        'image_description', c.image_description, 'embed_url', c.embed_url,
        'blurhash', c.blurhash, 'published_at',
        CASE WHEN c.published_at IS NULL THEN NULL ELSE eunha_ts(c.published_at) END,
        'domain', c.domain)
$$;
