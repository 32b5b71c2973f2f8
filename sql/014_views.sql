-- Views: a name for a query, expanded where a statement names it (engine/query/_views.py).
-- ``query`` is the SELECT as kyma's dialect writes it; ``columns`` the view's output
-- columns as [name, Postgres type name] pairs (what CREATE OR REPLACE may not change);
-- ``schema`` the same columns as an Arrow IPC schema (what pg_attribute lists);
-- ``reads`` the tables and views its query names (what DROP refuses to leave dangling).
-- A view's id comes from the tables' sequence, so a table and a view never share one (OIDs).
CREATE TABLE kyma.views (
    view_id    bigint PRIMARY KEY DEFAULT nextval(pg_get_serial_sequence('kyma.tables', 'table_id')),
    name       text NOT NULL UNIQUE,
    query      text NOT NULL,
    columns    jsonb NOT NULL,
    schema     bytea NOT NULL,
    reads      text[] NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX views_by_reads ON kyma.views USING gin (reads);

-- Tables and views share one namespace, as relations do in Postgres. Each insert takes a
-- transaction lock on its name and then looks for the name among the other kind, so two
-- concurrent CREATEs of one name cannot both commit.
CREATE FUNCTION kyma.relation_name_free() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('kyma.relation/' || NEW.name));
    IF TG_TABLE_NAME = 'tables' AND EXISTS (SELECT 1 FROM kyma.views WHERE name = NEW.name)
       OR TG_TABLE_NAME = 'views' AND EXISTS (SELECT 1 FROM kyma.tables WHERE name = NEW.name)
    THEN
        RAISE EXCEPTION 'relation "%" already exists', NEW.name USING ERRCODE = 'duplicate_table';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER tables_name_free BEFORE INSERT ON kyma.tables
    FOR EACH ROW EXECUTE FUNCTION kyma.relation_name_free();
CREATE TRIGGER views_name_free BEFORE INSERT ON kyma.views
    FOR EACH ROW EXECUTE FUNCTION kyma.relation_name_free();
