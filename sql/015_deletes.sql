-- Row-level deletes (DELETE, UPDATE): a manifest row may carry a deletion vector, the
-- positions of the extent's deleted rows as a serialized Roaring bitmap (pyroaring's
-- portable format), and how many rows it marks. A DELETE replaces an extent's row by a copy
-- with the grown vector (new extent id, same object), so two rows may share an object.
ALTER TABLE kyma.manifest ADD COLUMN deletes bytea;
ALTER TABLE kyma.manifest ADD COLUMN deleted_rows bigint NOT NULL DEFAULT 0;
ALTER TABLE kyma.manifest DROP CONSTRAINT manifest_object_path_key;
CREATE INDEX manifest_object_path ON kyma.manifest (object_path);
