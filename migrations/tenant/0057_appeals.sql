-- A user's side of moderation (issue 28): the rules a report cites, the
-- strike a user is told about (a moderation_warning notification naming
-- its account_warnings row), and the appeal of a strike that the staff
-- approve (undoing the strike's action) or reject, as Mastodon's Appeal.

-- The instance rules a report cites (Mastodon's reports.rule_ids), each
-- an instance_rules id of the same tenant when the report was made.
ALTER TABLE reports ADD COLUMN rule_ids bigint[] NOT NULL DEFAULT '{}';

-- Mastodon's AccountWarning#overruled_at: set when an appeal is approved.
ALTER TABLE account_warnings ADD COLUMN overruled_at timestamptz;

-- The strike a moderation_warning notification is about (Mastodon's
-- Notification activity, an AccountWarning); it goes with its strike.
ALTER TABLE notifications ADD COLUMN account_warning_id bigint,
    ADD FOREIGN KEY (tenant_id, account_warning_id)
        REFERENCES account_warnings (tenant_id, id) ON DELETE CASCADE;
-- Deleting a strike (its account's purge) finds its notifications here;
-- the column is NULL on every other row, so the index stays small.
CREATE INDEX notifications_account_warning ON notifications (tenant_id, account_warning_id)
    WHERE account_warning_id IS NOT NULL;

-- Mastodon's Appeal: one a strike, by the strike's target, within 20 days
-- of it (the API checks the window); decided once, by a staff member.
CREATE TABLE appeals (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    account_id bigint NOT NULL,
    account_warning_id bigint NOT NULL,
    text text NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
    approved_at timestamptz,
    approved_by_account_id bigint,
    rejected_at timestamptz,
    rejected_by_account_id bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, account_warning_id),
    FOREIGN KEY (tenant_id, account_warning_id) REFERENCES account_warnings (tenant_id, id)
        ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);
-- The staff's queue: the undecided ones, newest first.
CREATE INDEX appeals_pending ON appeals (tenant_id, id)
    WHERE approved_at IS NULL AND rejected_at IS NULL;
CREATE INDEX appeals_account ON appeals (tenant_id, account_id);

-- Mastodon's AccountWarning entity of strike p_id of tenant p_tenant,
-- without target_account (an Account entity the C side renders: it is the
-- notification's own account). NULL when there is no such strike. The
-- appeal is {text, state} or null. STRICT, so it is called as a function,
-- once a row that has a strike, not inlined into every notification page.
CREATE FUNCTION eunha_account_warning_json(p_tenant bigint, p_id bigint) RETURNS json
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
    SELECT json_build_object('id', w.id::text, 'action', w.action, 'text', w.text,
        'status_ids', coalesce(array_to_json(w.status_ids::text[]), '[]'::json),
        'created_at', eunha_ts(w.created_at),
        'appeal', (SELECT json_build_object('text', ap.text, 'state',
                       CASE WHEN ap.approved_at IS NOT NULL THEN 'approved'
                            WHEN ap.rejected_at IS NOT NULL THEN 'rejected'
                            ELSE 'pending' END)
                   FROM appeals ap WHERE ap.tenant_id = p_tenant
                   AND ap.account_warning_id = w.id))
    FROM account_warnings w WHERE w.tenant_id = p_tenant AND w.id = p_id
$$;
