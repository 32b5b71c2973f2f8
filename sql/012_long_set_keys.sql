-- A set member too long for an index entry (Postgres caps GIN entries near 8 KB, after
-- compression) failed its commit. Its key is now '#' and the md5 of its jsonb text; stage 1
-- spells the keys of a query's values with the same function (engine/catalog/_prune.py).
CREATE FUNCTION kyma.set_key(prefix text, member text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT prefix || CASE WHEN octet_length(member) > 512 THEN '#' || md5(member) ELSE member END
$$;

CREATE OR REPLACE FUNCTION kyma.stat_keys(stats jsonb, table_columns text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(key), '{}') FROM (
        SELECT kyma.set_key(col.key || '/' || kind.key || '=', v.value::text) AS key
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

-- Members of 512 bytes up to the old limit were indexed as themselves: key them anew.
UPDATE kyma.manifest AS m SET set_keys = kyma.stat_keys(
    m.column_stats,
    ARRAY(SELECT name FROM kyma.columns AS c WHERE c.table_id = m.table_id)
)
WHERE EXISTS (SELECT 1 FROM unnest(m.set_keys) AS k WHERE octet_length(k) > 512);
