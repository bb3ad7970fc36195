-- The instance's public description (src/api/instance_info.c, written by
-- src/admin/instance.c and /api/v1/admin/rules): its rules, its dated terms
-- of service, and the sign-ins that /api/v1/instance/activity counts. The
-- texts and switches (about, privacy policy, contact, visibility of peers
-- and blocks) are members of the settings row 'instance', one jsonb object,
-- so a tenant's description is one row to read and export.

-- Mastodon's Rule. Deleting one keeps its row (deleted_at), as Mastodon
-- does, because reports name the rules they cite by id.
CREATE TABLE instance_rules (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    priority integer NOT NULL DEFAULT 0,
    text text NOT NULL CHECK (length(text) BETWEEN 1 AND 1000),
    hint text NOT NULL DEFAULT '' CHECK (length(hint) <= 1000),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX instance_rules_order ON instance_rules (tenant_id, priority, id)
    WHERE deleted_at IS NULL;

-- Mastodon's TermsOfService (4.4): versions by the date they take effect.
-- One version a date, so GET /api/v1/instance/terms_of_service/:date names
-- one; the version in force is the latest whose date has come.
CREATE TABLE terms_of_service (
    tenant_id bigint NOT NULL,
    id bigint NOT NULL DEFAULT eunha_next_id(),
    effective_date date NOT NULL,
    text text NOT NULL CHECK (length(text) BETWEEN 1 AND 100000),
    changelog text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX terms_of_service_date ON terms_of_service (tenant_id, effective_date);

-- The days each user signed in, so a week's logins count each person once
-- whatever the window (Mastodon counts distinct users in an HLL a day). A
-- row per user and day, kept 24 weeks: the activity endpoint reaches 12,
-- NodeInfo's activeHalfyear 24.
CREATE TABLE user_sign_in_days (
    tenant_id bigint NOT NULL,
    user_id bigint NOT NULL,
    day date NOT NULL,
    PRIMARY KEY (tenant_id, user_id, day),
    FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX user_sign_in_days_day ON user_sign_in_days (tenant_id, day);

-- Every path that signs a user in stamps last_sign_in_at (the web form,
-- the password grant); the day is recorded from that, so no path can
-- forget it. The user's rows past 24 weeks go on the same probe.
CREATE FUNCTION eunha_record_sign_in() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO user_sign_in_days (tenant_id, user_id, day)
        VALUES (NEW.tenant_id, NEW.id, (NEW.last_sign_in_at AT TIME ZONE 'UTC')::date)
        ON CONFLICT DO NOTHING;
    DELETE FROM user_sign_in_days d WHERE d.tenant_id = NEW.tenant_id AND d.user_id = NEW.id
        AND d.day < (NEW.last_sign_in_at AT TIME ZONE 'UTC')::date - 168;
    RETURN NULL;
END
$$;
CREATE TRIGGER users_sign_in AFTER UPDATE OF last_sign_in_at ON users
    FOR EACH ROW WHEN (NEW.last_sign_in_at IS NOT NULL
        AND NEW.last_sign_in_at IS DISTINCT FROM OLD.last_sign_in_at)
    EXECUTE FUNCTION eunha_record_sign_in();
