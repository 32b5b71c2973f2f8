-- Materialized views (engine/query/_matviews.py) are views whose query reads the table that
-- holds their rows: ``definition`` is the query they were created with (NULL for a view),
-- ``storage`` that table, ``base_snapshot`` the snapshot of the table the definition reads
-- (``base``) that the rows are up to date with. Maintenance advances it in the transaction
-- that commits the new rows, from the value it read, so a change lands once.
ALTER TABLE kyma.views ADD COLUMN definition text;
ALTER TABLE kyma.views ADD COLUMN storage text;
ALTER TABLE kyma.views ADD COLUMN base text;
ALTER TABLE kyma.views ADD COLUMN base_snapshot bigint;
