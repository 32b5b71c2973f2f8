# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""OTLP export requests' protobuf wire bytes → the columns of kyma's spans and logs tables.

``decode(body, signal)`` reads a serialized ExportTraceServiceRequest (``TRACES``) or
ExportLogsServiceRequest (``LOGS``) in one pass of C, without the GIL, and returns each
column's Arrow buffers (kyma.ingest.otlp._wire makes the batch). The dynamic columns'
values are written as CBOR straight from the wire, byte for byte what ``cbor2.dumps`` makes
of the attributes as dicts (a repeated key keeps its first place and its last value).

Protobuf's rules are kept, so a body is refused exactly when protobuf refuses it: a field of
the wrong wire type is an unknown field, skipped; a repeated singular field is merged (a
message: its bytes concatenated; a scalar: the last one); a string must be UTF-8; messages
nest at most 100 deep. ValueError names what is wrong and at which byte of the body.

A record with a malformed id or a time past 2262 is left out (counted, the first one's
reason kept), as the OTLP tables' mapping says (docs/guide/otlp.md).
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memmove, memset

import cbor2
import orjson

TRACES = 0
LOGS = 1

ctypedef const uint8_t* cptr

cdef enum:
    INPUT = 0
    CAPACITY = 1
    MEMORY = 2

cdef enum:
    MAX_DEPTH = 100  # protobuf's (upb_DecodeOptions_MaxDepth)
    NEW_MAP_ENTRIES = 16
cdef uint64_t MAX_NANOS = 9223372036854775807ULL  # the latest instant a timestamp holds

# Column kinds and the tables' columns, in their schema's order (_tables.py).
cdef enum:
    TIME = 0  # int64 nanoseconds
    INT64 = 1
    INT32 = 2
    VAR = 3  # string or binary: int32 offsets and bytes

cdef enum:
    S_START = 0
    S_END = 1
    S_DURATION = 2
    S_TRACE = 3
    S_SPAN = 4
    S_PARENT = 5
    S_STATE = 6
    S_NAME = 7
    S_KIND = 8
    S_CODE = 9
    S_MESSAGE = 10
    S_ATTRS = 11
    S_EVENTS = 12
    S_LINKS = 13
    S_CONTEXT = 14  # service_name, resource_attributes, scope_name, scope_version, scope_attributes
    S_COLUMNS = 19

cdef enum:
    L_TIME = 0
    L_OBSERVED = 1
    L_SEVERITY = 2
    L_SEVERITY_TEXT = 3
    L_BODY = 4
    L_ATTRS = 5
    L_TRACE = 6
    L_SPAN = 7
    L_FLAGS = 8
    L_EVENT = 9
    L_CONTEXT = 10
    L_COLUMNS = 15

cdef int SPAN_KINDS[19]
SPAN_KINDS[:] = [TIME, TIME, INT64, VAR, VAR, VAR, VAR, VAR, VAR, VAR, VAR, VAR, VAR, VAR,
                 VAR, VAR, VAR, VAR, VAR]
cdef int LOG_KINDS[15]
LOG_KINDS[:] = [TIME, TIME, INT32, VAR, VAR, VAR, VAR, VAR, INT32, VAR, VAR, VAR, VAR, VAR, VAR]

cdef const char* KIND_NAMES[6]
KIND_NAMES[:] = [b"UNSPECIFIED", b"INTERNAL", b"SERVER", b"CLIENT", b"PRODUCER", b"CONSUMER"]
cdef const char* CODE_NAMES[3]
CODE_NAMES[:] = [b"UNSET", b"OK", b"ERROR"]
cdef const char* BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
cdef const char* HEX = b"0123456789abcdef"
cdef uint8_t NOTHING[1]  # where an absent string or bytes value points
cdef uint8_t HALF_NAN[2]  # cbor2 writes NaN and the infinities as half floats
cdef uint8_t HALF_INF[2]
cdef uint8_t HALF_MINUS_INF[2]
HALF_NAN[:] = [0x7E, 0]
HALF_INF[:] = [0x7C, 0]
HALF_MINUS_INF[:] = [0xFC, 0]


# ---- the decoder's state (its functions are in the _otlp_*.pxi files included below) -----

cdef struct Buf:
    uint8_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef struct Col:
    int kind
    Buf values  # fixed-width values, or VAR's offsets (a leading 0)
    Buf data  # VAR's bytes
    Buf valid  # validity bits


cdef struct Dec:
    cptr body
    cptr body_end
    char error[200]
    Col* cols
    int ncols
    Py_ssize_t rows
    Py_ssize_t seen
    Py_ssize_t rejected
    char rejection[200]
    Buf arena  # pointers of the blocks that merged messages were copied into
    # the current resource's and scope's columns: a value, or null
    Buf service
    Buf resource_attrs
    Buf scope_name
    Buf scope_version
    Buf scope_attrs
    bint has_service, has_resource_attrs, has_scope_name, has_scope_version, has_scope_attrs
    Buf scratch  # values encoded only to be checked, then dropped
    Buf json  # a text column's value that is not a string, as CBOR, to write as JSON
    int last_case  # the oneof field of the AnyValue any_value wrote last (0: unset)
    int failure  # why it stopped: INPUT (d.error names what and where), CAPACITY or MEMORY


cdef struct Field:
    uint32_t num
    int wt
    uint64_t v  # a varint's or a fixed field's value
    cptr p  # a length-delimited field's bytes
    Py_ssize_t n
    cptr at  # where its tag starts


cdef struct Entry:
    cptr key
    Py_ssize_t klen
    Py_ssize_t start  # the entry's key and value in the output
    Py_ssize_t stop


cdef struct Map:
    Py_ssize_t head  # the byte kept for the map's head
    Entry* entries
    Py_ssize_t n
    Py_ssize_t cap
    Entry local[NEW_MAP_ENTRIES]


include "_otlp_columns.pxi"
include "_otlp_protobuf.pxi"
include "_otlp_cbor.pxi"
include "_otlp_values.pxi"
include "_otlp_scopes.pxi"
include "_otlp_spans.pxi"
include "_otlp_logs.pxi"


# ---- the entry point --------------------------------------------------------------------

cdef void release(Dec* d) noexcept nogil:
    cdef Py_ssize_t i
    cdef Buf* bufs[7]
    for i in range(d.arena.size // <Py_ssize_t>sizeof(void*)):
        free((<void**>d.arena.data)[i])
    bufs[:] = [&d.arena, &d.service, &d.resource_attrs, &d.scope_name, &d.scope_version,
               &d.scope_attrs, &d.scratch]
    for i in range(7):
        free(bufs[i].data)
    free(d.json.data)
    if d.cols != NULL:
        for i in range(d.ncols):
            free(d.cols[i].values.data)
            free(d.cols[i].data.data)
            free(d.cols[i].valid.data)
        free(d.cols)


cdef object taken(Buf* b):
    if b.data == NULL:
        return b""
    return PyBytes_FromStringAndSize(<char*>b.data, b.size)


def decode(const uint8_t[::1] body not None, int signal):
    """``(rows, seen, rejected, first rejection, columns)`` of one export request's wire
    bytes; each column ``(validity bits, values or offsets, bytes or None)``. ValueError
    when the bytes are not a valid request; OverflowError when a column would hold over
    2 GiB."""
    cdef Dec d
    cdef int i, r = 0, context_column
    cdef Field f
    cdef cptr p
    cdef cptr end
    cdef int* kinds
    memset(&d, 0, sizeof(Dec))
    d.ncols = S_COLUMNS if signal == TRACES else L_COLUMNS
    kinds = <int*>SPAN_KINDS if signal == TRACES else <int*>LOG_KINDS
    context_column = S_CONTEXT if signal == TRACES else L_CONTEXT
    d.body = &body[0] if body.shape[0] else <cptr>b""
    d.body_end = d.body + body.shape[0]
    try:
        with nogil:
            d.cols = <Col*>malloc(d.ncols * sizeof(Col))
            if d.cols == NULL:
                r = give_up(&d, MEMORY, "out of memory")
            else:
                for i in range(d.ncols):
                    col_init(&d, &d.cols[i], kinds[i])
                p = d.body
                end = d.body_end
                while True:
                    r = next_field(&d, &p, end, &f, 0)
                    if r <= 0:
                        break
                    if f.num == 1 and f.wt == 2:
                        r = resource_group(&d, f.p, f.p + f.n, 1, context_column)
                        if r < 0:
                            break
        if r < 0 or d.error[0] != 0:
            message = (<char*>d.error).decode("utf-8", "replace")
            if d.failure == MEMORY:
                raise MemoryError(message)
            raise OverflowError(message) if d.failure == CAPACITY else ValueError(message)
        columns = [
            (taken(&d.cols[i].valid), taken(&d.cols[i].values),
             taken(&d.cols[i].data) if d.cols[i].kind == VAR else None)
            for i in range(d.ncols)
        ]
        return d.rows, d.seen, d.rejected, (<char*>d.rejection).decode(), columns
    finally:
        release(&d)
