-- A local account's username stays taken after its account is purged
-- (issue 29: an owner deleting their account, or a suspension whose
-- retention passed), as Mastodon keeps a deleted account's row: the name
-- is the actor's id on every server that knew it, and a new person under
-- it would inherit what those servers remember. The purge
-- (src/queue/accounts.c) writes the name here, lower-cased; sign-up
-- (src/api/oauth_signup.c) answers "taken", and any other insert of a
-- local account under it fails as a duplicate (23505) through the
-- trigger. A sign-up the staff reject is not reserved, as in Mastodon.
CREATE TABLE reserved_usernames (
    tenant_id bigint NOT NULL,
    username text NOT NULL,
    reserved_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, username)
);

CREATE FUNCTION eunha_username_unreserved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.domain IS NULL AND EXISTS (SELECT 1 FROM reserved_usernames r
            WHERE r.tenant_id = NEW.tenant_id AND r.username = lower(NEW.username)) THEN
        RAISE unique_violation USING MESSAGE = 'username ' || NEW.username || ' is reserved';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER accounts_username_unreserved BEFORE INSERT ON accounts
    FOR EACH ROW EXECUTE FUNCTION eunha_username_unreserved();
