-- The control database: where each tenant's rows live (placements) and one
-- row per tenant. Pool limits left NULL follow [database_pool] in the
-- config, so an operator can change the default for every tenant at once.

-- A placement is one PostgreSQL database holding tenants' rows in the
-- placement schema (migrations/tenant/). A pooled placement holds many
-- tenants and is shared by them; a dedicated one holds one big tenant. The
-- code path is the same for both. database_url NULL: the control database's
-- server.
CREATE TABLE placements (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    kind text NOT NULL CHECK (kind IN ('pooled', 'dedicated')),
    database text NOT NULL,
    database_url text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (database, database_url)
);

CREATE TABLE tenants (
    id bigserial PRIMARY KEY,
    domain text NOT NULL UNIQUE,
    title text NOT NULL DEFAULT '',
    placement_id bigint NOT NULL REFERENCES placements (id),
    state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'suspended', 'deleting')),
    max_connections integer CHECK (max_connections BETWEEN 1 AND 100),
    min_connections integer CHECK (min_connections >= 0),
    acquire_timeout_seconds integer CHECK (acquire_timeout_seconds >= 1),
    idle_timeout_seconds integer CHECK (idle_timeout_seconds >= 1),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tenants_placement ON tenants (placement_id);
