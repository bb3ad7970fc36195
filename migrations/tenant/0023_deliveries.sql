-- Outgoing deliveries (src/ap/deliver.c). A remote server that answers 401
-- or 403 to a signed delivery may have blocked this tenant alone (another
-- tenant of the same process can still reach it), so refusals are kept per
-- tenant and host: the delivery is dropped, and this row says why and how
-- often, for an operator to look at.
CREATE TABLE delivery_refusals (
    tenant_id bigint NOT NULL,
    host text NOT NULL,
    status smallint NOT NULL,
    refusals integer NOT NULL DEFAULT 1,
    first_at timestamptz NOT NULL DEFAULT now(),
    last_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, host)
);

