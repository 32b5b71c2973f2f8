# The compiled OTLP wire decoder's interface (otlp_wire.pyx), for mypy.

TRACES: int
LOGS: int

def decode(
    body: bytes, signal: int
) -> tuple[int, int, int, str, list[tuple[bytes, bytes, bytes | None]]]: ...
