-- Where each partitioned source (a Kafka topic, later others) has been read up to, committed
-- in the same transaction as the extents holding what was read: exactly-once by construction.
-- A writer claims a partition by bumping its epoch; a commit carrying an older epoch (a
-- paused "zombie" worker that lost the partition) is rejected, and positions never go back.

CREATE TABLE kyma.source_positions (
    source     text NOT NULL,
    stream     text NOT NULL,
    partition  int NOT NULL,
    position   bigint NOT NULL,  -- the next position to read (Kafka: last offset written + 1)
    epoch      bigint NOT NULL,  -- the current owner's claim; bumped on every claim
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, stream, partition)
);
