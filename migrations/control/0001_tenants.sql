-- The control database: one row per tenant. Pool limits left NULL follow
-- [database_pool] in the config, so an operator can change the default for
-- every tenant at once.
CREATE TABLE tenants (
    id bigserial PRIMARY KEY,
    domain text NOT NULL UNIQUE,
    title text NOT NULL DEFAULT '',
    database text NOT NULL,
    database_url text,
    state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'suspended')),
    max_connections integer CHECK (max_connections BETWEEN 1 AND 100),
    min_connections integer CHECK (min_connections >= 0),
    acquire_timeout_seconds integer CHECK (acquire_timeout_seconds >= 1),
    idle_timeout_seconds integer CHECK (idle_timeout_seconds >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
