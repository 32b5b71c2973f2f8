"""The tlm envelope: magic markers and the stats footer."""

from __future__ import annotations

import struct

MAGIC_V1 = b"KYMA\x01"
MAGIC_V2 = b"KYMA\x02"
MAGIC_LEN = 5
STATS_LEN = struct.Struct("<I")
TRAILER_LEN = STATS_LEN.size + MAGIC_LEN


def trailer(stats_json: bytes) -> bytes:
    """The bytes that follow the Arrow IPC body in a v2 extent."""
    return stats_json + STATS_LEN.pack(len(stats_json)) + MAGIC_V2
