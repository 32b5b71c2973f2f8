-- A commit inserted every member of an extent's distinct and token sets into the set_keys
-- GIN index: ~12 000 keys for 10 000 rows with a unique id, 130 ms of a 140 ms manifest
-- insert. A set of more than 1 000 members (the distinct cap; only token sets grow past it)
-- is now keyed '<column>/<kind>=~' alone: stage 1 finds such extents through that key and
-- then reads the set from column_stats (engine/catalog/_prune.py), so it prunes as before.
-- Rows committed earlier keep their keys (all members indexed) and are read as they were.
CREATE OR REPLACE FUNCTION kyma.stat_keys(stats jsonb, table_columns text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(key), '{}') FROM (
        SELECT kyma.set_key(col.key || '/' || kind.key || '=', v.value::text) AS key
        FROM jsonb_each(stats) AS col, jsonb_each(col.value) AS kind,
             jsonb_array_elements(kind.value) AS v
        WHERE jsonb_typeof(col.value) = 'object' AND jsonb_typeof(kind.value) = 'array'
          AND CASE WHEN jsonb_typeof(kind.value) = 'array'
                   THEN jsonb_array_length(kind.value) <= 1000 END
        UNION ALL
        SELECT col.key || '/' || kind.key || '=~'
        FROM jsonb_each(stats) AS col, jsonb_each(col.value) AS kind
        WHERE jsonb_typeof(col.value) = 'object' AND jsonb_typeof(kind.value) = 'array'
          AND CASE WHEN jsonb_typeof(kind.value) = 'array'
                   THEN jsonb_array_length(kind.value) > 1000 END
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
