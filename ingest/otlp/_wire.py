"""Export requests' protobuf bytes → one Arrow batch each, by the compiled decoder
(kyma.engine.native.otlp_wire): spans and log records, without a Python object per value."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from kyma.engine.errors import IngestError
from kyma.engine.native import otlp_wire
from kyma.engine.types import Column, arrow_schema

from ._values import Outcome


@dataclass(frozen=True)
class Decoded:
    """One export's kept records as a batch, how many it held, and its outcome."""

    batch: pa.RecordBatch
    records: int
    outcome: Outcome


class WireDecoder:
    """Decodes one signal's Export requests (``signal``: otlp_wire.TRACES or LOGS) into
    batches of ``columns``; ``what`` (the signal's name) and ``message`` (the request type)
    name them in errors."""

    def __init__(self, signal: int, columns: tuple[Column, ...], what: str, message: str) -> None:
        self.signal = signal
        self.what = what
        self.schema = arrow_schema(columns)
        self.message = message

    def decode(self, body: bytes) -> Decoded:
        """IngestError when ``body`` is not a valid request (what and at which byte)."""
        try:
            rows, seen, rejected, reason, buffers = otlp_wire.decode(body, self.signal)
        except OverflowError as e:  # e.g. a resource's attributes repeated on every row
            raise IngestError(f"the {self.what} cannot be stored: {e}") from None
        except ValueError as e:
            raise IngestError(f"the body is not a valid {self.message}: {e}") from None
        arrays = [
            pa.Array.from_buffers(
                field.type,
                rows,
                [pa.py_buffer(b) for b in parts if b is not None],
                null_count=-1,
            )
            for field, parts in zip(self.schema, buffers, strict=True)
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        return Decoded(batch, seen, Outcome(rejected, reason))
