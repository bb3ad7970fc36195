-- Every local account signs its federation requests with its own RSA key
-- pair (accounts.public_key / private_key, PEM). Accounts made from now on
-- get theirs when they are made; those made before get them from the
-- "account_keys" job (src/ap/account_keys.c), a few per run, so this
-- migration queues one per tenant that has such accounts instead of making
-- keys here (a key takes tens of milliseconds of CPU, too slow for SQL).
INSERT INTO jobs (tenant_id, queue, kind, dedupe_key)
SELECT DISTINCT tenant_id, 'default', 'account_keys', 'account_keys'
FROM accounts
WHERE domain IS NULL AND (private_key IS NULL OR public_key IS NULL)
ON CONFLICT (tenant_id, dedupe_key) DO NOTHING;

-- The job finds the keyless local accounts among many remote ones; once
-- they all have keys the index is empty. (Both statements may run again:
-- tests replay this file to check what it queues.)
CREATE INDEX IF NOT EXISTS accounts_keyless ON accounts (tenant_id, id)
    WHERE domain IS NULL AND (private_key IS NULL OR public_key IS NULL);
