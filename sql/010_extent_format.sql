-- The format of each extent: 'tlm' (v1/v2, every extent written before this migration) or
-- 'parquet'. Readers dispatch on the object itself; compaction rewrites extents whose format
-- is not the one new writes use.
ALTER TABLE kyma.manifest ADD COLUMN format text NOT NULL DEFAULT 'tlm';
