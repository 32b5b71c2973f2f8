-- Stage 1 at a million extents: indexes that find a query's extents without reading every
-- manifest row, and the extent count of each snapshot kept with it (no count(*) per query).

-- set_keys: one entry per value of an extent's distinct and token sets
-- ('<column>/distinct=<value as jsonb text>'), and '<column>/<kind>=*' where the extent's set
-- for a column of its table is unknown (too many values, no set kept, or no stats for that
-- column). An equality, IN or token condition becomes one GIN-indexed overlap (&&).
CREATE FUNCTION kyma.stat_keys(stats jsonb, table_columns text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(key), '{}') FROM (
        SELECT col.key || '/' || kind.key || '=' || v.value::text AS key
        FROM jsonb_each(stats) AS col, jsonb_each(col.value) AS kind,
             jsonb_array_elements(kind.value) AS v
        WHERE jsonb_typeof(col.value) = 'object' AND jsonb_typeof(kind.value) = 'array'
        UNION ALL
        SELECT col.key || '/' || kind.key || '=*'
        FROM jsonb_each(stats) AS col, jsonb_each(col.value) AS kind
        WHERE jsonb_typeof(col.value) = 'object' AND jsonb_typeof(kind.value) <> 'array'
        UNION ALL
        SELECT c || '/' || kind || '=*'
        FROM unnest(table_columns) AS c, unnest(ARRAY['distinct', 'tokens']) AS kind
        WHERE jsonb_typeof(stats -> c) IS DISTINCT FROM 'object'
           OR NOT (stats -> c) ? kind
    ) AS keys
$$;

ALTER TABLE kyma.manifest ADD COLUMN set_keys text[];
UPDATE kyma.manifest AS m SET set_keys = kyma.stat_keys(
    m.column_stats,
    ARRAY(SELECT name FROM kyma.columns AS c WHERE c.table_id = m.table_id)
);
ALTER TABLE kyma.manifest ALTER COLUMN set_keys SET NOT NULL;

CREATE INDEX manifest_set_keys ON kyma.manifest USING gin (set_keys);
CREATE INDEX manifest_present_paths ON kyma.manifest USING gin (present_paths);
CREATE INDEX manifest_max_ts ON kyma.manifest (table_id, max_ts);
CREATE INDEX manifest_min_ts ON kyma.manifest (table_id, min_ts);

-- Extents in each snapshot: the parent's count plus those added minus those removed.
-- NULL for snapshots committed before this migration (counted on demand).
ALTER TABLE kyma.snapshots ADD COLUMN extent_count bigint;
