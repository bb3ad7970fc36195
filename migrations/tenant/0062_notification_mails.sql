-- E-mails about notifications (issue 29), as Mastodon's
-- notification_emails settings: which kinds of notification a user also
-- hears of by mail, Mastodon's defaults (follows, follow requests and
-- mentions on; boosts and favourites off). unsubscribe_token is the
-- credential of the one-click unsubscribe link those mails carry
-- (src/social/notification_mail.c, src/api/notification_mail_prefs.c): it
-- can only turn e-mails off, so it is kept as sent, made on the first
-- such mail.
ALTER TABLE users
    ADD COLUMN notification_emails jsonb NOT NULL DEFAULT
        '{"follow": true, "follow_request": true, "mention": true, "reblog": false, "favourite": false}',
    ADD COLUMN unsubscribe_token text;
CREATE UNIQUE INDEX users_unsubscribe_token ON users (tenant_id, unsubscribe_token)
    WHERE unsubscribe_token IS NOT NULL;
