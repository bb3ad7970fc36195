-- Quote posts, Mastodon 4.5's way and FEP-044f (issue 32, src/api/quotes.c,
-- src/ap/process_quote.c, docs/quotes.md).
--
-- Who may quote a status: its author's policy, Mastodon's three choices
-- for the API (0 public, 1 followers, 2 nobody). NULL where nobody said:
-- statuses from before this migration and remote ones whose Note carries
-- no interactionPolicy, which Mastodon treats as not quotable by others.
-- A column of the status, so that changing it touches the row and a
-- cached render of it is built again.
ALTER TABLE statuses ADD COLUMN quote_policy smallint
    CHECK (quote_policy IS NULL OR quote_policy BETWEEN 0 AND 2);

-- One quote a status: the quoting status, what it quotes (a status we
-- have, or only its URI while it is not fetched), and how far the quoted
-- author's approval went. No foreign key on the quoted status: a quote
-- outlives the post it quotes, and says "deleted" then. A remote quote of
-- a local post is answered (QuoteRequest) before its Note may reach us:
-- its row then has the quoting status's URI only, and gets the status
-- when the Note arrives.
CREATE TABLE quotes (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    status_id bigint,
    status_uri text,
    account_id bigint NOT NULL,
    quoted_status_id bigint,
    quoted_account_id bigint,
    quoted_uri text,
    state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'accepted', 'rejected', 'revoked', 'deleted')),
    -- The QuoteAuthorization that approves it (ours for a local quoted
    -- post, served at this address; the remote author's otherwise).
    approval_uri text,
    -- The QuoteRequest sent or received for it, which Accept and Reject
    -- name as their object.
    activity_uri text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, status_id) REFERENCES statuses (tenant_id, id) ON DELETE CASCADE,
    CHECK (status_id IS NOT NULL OR status_uri IS NOT NULL)
);
CREATE UNIQUE INDEX quotes_status ON quotes (tenant_id, status_id);
CREATE INDEX quotes_status_uri ON quotes (tenant_id, status_uri) WHERE status_uri IS NOT NULL;
-- The quotes of a status, newest first (GET /api/v1/statuses/:id/quotes).
CREATE INDEX quotes_quoted ON quotes (tenant_id, quoted_status_id, id)
    WHERE quoted_status_id IS NOT NULL;
CREATE INDEX quotes_activity ON quotes (tenant_id, activity_uri) WHERE activity_uri IS NOT NULL;
CREATE INDEX quotes_approval ON quotes (tenant_id, approval_uri) WHERE approval_uri IS NOT NULL;
