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


# ---- growable buffers and columns ------------------------------------------------------

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


cdef int fail(Dec* d, const char* what, cptr at) noexcept nogil:
    if d.error[0] != 0:
        return -1
    if at >= d.body and at <= d.body_end:
        snprintf(d.error, 200, "%s at byte %zd", what, <Py_ssize_t>(at - d.body))
    else:
        snprintf(d.error, 200, "%s (in a repeated message merged as protobuf does)", what)
    return -1


cdef int reserve(Dec* d, Buf* b, Py_ssize_t extra) noexcept nogil:
    cdef Py_ssize_t cap
    cdef uint8_t* grown
    if b.size + extra <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 256
    while cap < b.size + extra:
        cap *= 2
    grown = <uint8_t*>realloc(b.data, cap)
    if grown == NULL:
        return fail(d, "out of memory", NULL)
    b.data = grown
    b.cap = cap
    return 0


cdef inline int put(Dec* d, Buf* b, const void* p, Py_ssize_t n) noexcept nogil:
    if reserve(d, b, n) < 0:
        return -1
    memcpy(b.data + b.size, p, n)
    b.size += n
    return 0


cdef inline int put_byte(Dec* d, Buf* b, uint8_t c) noexcept nogil:
    if reserve(d, b, 1) < 0:
        return -1
    b.data[b.size] = c
    b.size += 1
    return 0


cdef int col_init(Dec* d, Col* c, int kind) noexcept nogil:
    cdef int32_t zero = 0
    memset(c, 0, sizeof(Col))
    c.kind = kind
    if kind == VAR:
        return put(d, &c.values, &zero, 4)
    return 0


cdef inline int col_valid(Dec* d, Col* c, Py_ssize_t row, bint valid) noexcept nogil:
    """Set the validity bit of ``row`` (rows are written in order)."""
    if (row & 7) == 0:
        if row >> 3 >= c.valid.size and put_byte(d, &c.valid, 0) < 0:
            return -1
        c.valid.data[row >> 3] = 0
    if valid:
        c.valid.data[row >> 3] |= <uint8_t>(1 << (row & 7))
    else:
        c.valid.data[row >> 3] &= <uint8_t>~(1 << (row & 7))
    return 0


cdef inline int end_var(Dec* d, Col* c, Py_ssize_t row, bint valid) noexcept nogil:
    """Close ``row`` of a VAR column whose bytes were appended to ``c.data``."""
    cdef int32_t offset
    if c.data.size > 0x7FFFFFFF:
        return fail(d, "a column's values are over 2 GiB", NULL)
    offset = <int32_t>c.data.size
    if put(d, &c.values, &offset, 4) < 0:
        return -1
    return col_valid(d, c, row, valid)


cdef inline int put_null(Dec* d, Col* c, Py_ssize_t row) noexcept nogil:
    cdef int64_t zero = 0
    if c.kind == VAR:
        return end_var(d, c, row, False)
    if put(d, &c.values, &zero, 4 if c.kind == INT32 else 8) < 0:
        return -1
    return col_valid(d, c, row, False)


cdef inline int put_int(Dec* d, Col* c, Py_ssize_t row, int64_t v) noexcept nogil:
    cdef int32_t small = <int32_t>v
    if c.kind == INT32:
        if put(d, &c.values, &small, 4) < 0:
            return -1
    elif put(d, &c.values, &v, 8) < 0:
        return -1
    return col_valid(d, c, row, True)


cdef inline int put_var(Dec* d, Col* c, Py_ssize_t row, const void* p, Py_ssize_t n) noexcept nogil:
    if put(d, &c.data, p, n) < 0:
        return -1
    return end_var(d, c, row, True)


cdef int put_hex(Dec* d, Col* c, Py_ssize_t row, cptr p, Py_ssize_t n) noexcept nogil:
    """An id as lowercase hex; null when empty."""
    cdef Py_ssize_t i
    cdef uint8_t* out
    if n == 0:
        return put_null(d, c, row)
    if reserve(d, &c.data, 2 * n) < 0:
        return -1
    out = c.data.data + c.data.size
    for i in range(n):
        out[2 * i] = HEX[p[i] >> 4]
        out[2 * i + 1] = HEX[p[i] & 15]
    c.data.size += 2 * n
    return end_var(d, c, row, True)


cdef int put_name(Dec* d, Col* c, Py_ssize_t row, int32_t value, const char** names, int count) noexcept nogil:
    """An enum's name without its prefix, or its number when it has none."""
    cdef char digits[16]
    cdef int n
    if 0 <= value < count:
        n = 0
        while names[value][n] != 0:
            n += 1
        return put_var(d, c, row, names[value], n)
    n = snprintf(digits, 16, "%d", value)
    return put_var(d, c, row, digits, n)


cdef void rollback(Dec* d, Py_ssize_t row) noexcept nogil:
    """Drop what was written of ``row`` (the last one) in every column but the resource and
    scope columns (the last five, written once the scope's records are)."""
    cdef int i
    cdef Col* c
    for i in range(d.ncols - 5):
        c = &d.cols[i]
        if c.kind == VAR:
            c.values.size = 4 * (row + 1)
            c.data.size = (<int32_t*>c.values.data)[row]
        else:
            c.values.size = row * (4 if c.kind == INT32 else 8)


# ---- the wire format --------------------------------------------------------------------

cdef struct Field:
    uint32_t num
    int wt
    uint64_t v  # a varint's or a fixed field's value
    cptr p  # a length-delimited field's bytes
    Py_ssize_t n
    cptr at  # where its tag starts


cdef inline int varint(Dec* d, cptr* pos, cptr end, uint64_t* out) noexcept nogil:
    cdef cptr p = pos[0]
    cdef uint64_t v = 0
    cdef int shift = 0
    cdef uint8_t b
    while True:
        if p >= end:
            return fail(d, "a varint runs past the end of its message", pos[0])
        b = p[0]
        p += 1
        v |= <uint64_t>(b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift >= 70:
            return fail(d, "a varint is longer than 10 bytes", pos[0])
    pos[0] = p
    out[0] = v
    return 0




cdef int next_field(Dec* d, cptr* pos, cptr end, Field* f, int depth) noexcept nogil:
    """Read the next field at ``pos``: 1, or 0 at the message's end, or -1 (d.error says)."""
    cdef uint64_t tag
    cdef cptr at
    while True:
        at = pos[0]
        if at >= end:
            return 0
        if varint(d, pos, end, &tag) < 0:
            return -1
        if tag > 0xFFFFFFFFULL or tag >> 3 == 0:
            return fail(d, "a field number is out of range", at)
        f.num = <uint32_t>(tag >> 3)
        f.wt = tag & 7
        f.at = at
        if f.wt == 0:
            if varint(d, pos, end, &f.v) < 0:
                return -1
        elif f.wt == 1:
            if end - pos[0] < 8:
                return fail(d, "a 64-bit field runs past the end of its message", at)
            memcpy(&f.v, pos[0], 8)
            pos[0] += 8
        elif f.wt == 5:
            if end - pos[0] < 4:
                return fail(d, "a 32-bit field runs past the end of its message", at)
            f.v = 0
            memcpy(&f.v, pos[0], 4)
            pos[0] += 4
        elif f.wt == 2:
            if varint(d, pos, end, &f.v) < 0:
                return -1
            if f.v > <uint64_t>(end - pos[0]):
                return fail(d, "a length-delimited field runs past the end of its message", at)
            f.p = pos[0]
            f.n = <Py_ssize_t>f.v
            pos[0] += f.n
        elif f.wt == 3:
            if skip_group(d, pos, end, f.num, depth + 1) < 0:
                return -1
            continue  # a group is never a field kyma reads
        elif f.wt == 4:
            return fail(d, "an end-group tag has no start", at)
        else:
            return fail(d, "a field has wire type 6 or 7", at)
        return 1


cdef int skip_group(Dec* d, cptr* pos, cptr end, uint32_t num, int depth) noexcept nogil:
    cdef uint64_t tag, ignored
    cdef cptr at
    if depth > MAX_DEPTH:
        return fail(d, "messages nest over 100 deep", pos[0])
    while True:
        at = pos[0]
        if at >= end:
            return fail(d, "a group has no end-group tag", at)
        if varint(d, pos, end, &tag) < 0:
            return -1
        if tag > 0xFFFFFFFFULL or tag >> 3 == 0:
            return fail(d, "a field number is out of range", at)
        if tag & 7 == 4:
            if tag >> 3 != num:
                return fail(d, "an end-group tag does not match its group", at)
            return 0
        if tag & 7 == 0:
            if varint(d, pos, end, &ignored) < 0:
                return -1
        elif tag & 7 == 1 or tag & 7 == 5:
            if end - pos[0] < (8 if tag & 7 == 1 else 4):
                return fail(d, "a fixed-width field runs past the end of its message", at)
            pos[0] += 8 if tag & 7 == 1 else 4
        elif tag & 7 == 2:
            if varint(d, pos, end, &ignored) < 0:
                return -1
            if ignored > <uint64_t>(end - pos[0]):
                return fail(d, "a length-delimited field runs past the end of its message", at)
            pos[0] += <Py_ssize_t>ignored
        elif tag & 7 == 3:
            if skip_group(d, pos, end, <uint32_t>(tag >> 3), depth + 1) < 0:
                return -1
        else:
            return fail(d, "a field has wire type 6 or 7", at)


cdef int utf8(Dec* d, cptr p, Py_ssize_t n, const char* what, cptr at) noexcept nogil:
    """Fail unless ``p[:n]`` is UTF-8 (as protobuf checks a string field)."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, c1
    cdef int more, k
    cdef uint64_t word
    while i < n:
        if i + 8 <= n:
            memcpy(&word, p + i, 8)
            if word & 0x8080808080808080ULL == 0:
                i += 8
                continue
        c = p[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            more = 1
        elif 0xE0 <= c <= 0xEF:
            more = 2
        elif 0xF0 <= c <= 0xF4:
            more = 3
        else:
            return fail(d, what, at)
        if i + more >= n:
            return fail(d, what, at)
        c1 = p[i + 1]
        if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 > 0x9F):
            return fail(d, what, at)
        if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 > 0x8F):
            return fail(d, what, at)
        for k in range(1, more + 1):
            if p[i + k] & 0xC0 != 0x80:
                return fail(d, what, at)
        i += more + 1
    return 0


cdef int nested(Dec* d, int depth, cptr at) noexcept nogil:
    if depth > MAX_DEPTH:
        return fail(d, "messages nest over 100 deep", at)
    return 0


cdef int merged(Dec* d, cptr p, cptr end, uint32_t num, int depth, cptr* out, Py_ssize_t* n) noexcept nogil:
    """The bytes of message field ``num`` of the message ``p:end`` seen more than once, as
    one message: its occurrences concatenated (protobuf merges them so)."""
    cdef Field f
    cdef Buf joined
    cdef int r
    memset(&joined, 0, sizeof(Buf))
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r < 0:
            free(joined.data)
            return -1
        if r == 0:
            break
        if f.num == num and f.wt == 2 and put(d, &joined, f.p, f.n) < 0:
            free(joined.data)
            return -1
    if put(d, &d.arena, &joined.data, sizeof(void*)) < 0:
        free(joined.data)
        return -1
    out[0] = joined.data
    n[0] = joined.size
    return 0


# ---- CBOR ------------------------------------------------------------------------------

cdef inline int cbor_head(Dec* d, Buf* out, int major, uint64_t v) noexcept nogil:
    cdef uint8_t h[9]
    cdef int n, i
    if v < 24:
        return put_byte(d, out, <uint8_t>((major << 5) | v))
    if v <= 0xFF:
        n = 1
        h[0] = (major << 5) | 24
    elif v <= 0xFFFF:
        n = 2
        h[0] = (major << 5) | 25
    elif v <= 0xFFFFFFFFULL:
        n = 4
        h[0] = (major << 5) | 26
    else:
        n = 8
        h[0] = (major << 5) | 27
    for i in range(n):
        h[n - i] = <uint8_t>(v >> (8 * i))
    return put(d, out, h, n + 1)


cdef inline int cbor_text(Dec* d, Buf* out, const void* p, Py_ssize_t n) noexcept nogil:
    if cbor_head(d, out, 3, n) < 0:
        return -1
    return put(d, out, p, n)


cdef inline int key(Dec* d, Buf* out, const char* name) noexcept nogil:
    """A map key: ASCII text."""
    cdef Py_ssize_t n = 0
    while name[n] != 0:
        n += 1
    return cbor_text(d, out, name, n)


cdef inline int cbor_int(Dec* d, Buf* out, int64_t v) noexcept nogil:
    if v >= 0:
        return cbor_head(d, out, 0, <uint64_t>v)
    return cbor_head(d, out, 1, ~(<uint64_t>v))


cdef int cbor_double(Dec* d, Buf* out, uint64_t bits) noexcept nogil:
    cdef uint8_t h[9]
    cdef int i
    if (bits >> 52) & 0x7FF == 0x7FF:  # cbor2 writes NaN and the infinities as halves
        if put_byte(d, out, 0xF9) < 0:
            return -1
        if bits & 0xFFFFFFFFFFFFFULL:
            return put(d, out, HALF_NAN, 2)
        return put(d, out, <uint8_t*>HALF_MINUS_INF if bits >> 63 else <uint8_t*>HALF_INF, 2)
    h[0] = 0xFB
    for i in range(8):
        h[8 - i] = <uint8_t>(bits >> (8 * i))
    return put(d, out, h, 9)


cdef int cbor_base64(Dec* d, Buf* out, cptr p, Py_ssize_t n) noexcept nogil:
    """Bytes as base64 text (OTLP/JSON's form of a bytes value)."""
    cdef Py_ssize_t size = (n + 2) // 3 * 4
    cdef Py_ssize_t i
    cdef uint8_t* o
    cdef uint32_t v
    if cbor_head(d, out, 3, size) < 0 or reserve(d, out, size) < 0:
        return -1
    o = out.data + out.size
    i = 0
    while i + 3 <= n:
        v = (<uint32_t>p[i] << 16) | (<uint32_t>p[i + 1] << 8) | p[i + 2]
        o[0] = BASE64[v >> 18]
        o[1] = BASE64[(v >> 12) & 63]
        o[2] = BASE64[(v >> 6) & 63]
        o[3] = BASE64[v & 63]
        o += 4
        i += 3
    if n - i == 1:
        v = <uint32_t>p[i] << 16
        o[0] = BASE64[v >> 18]
        o[1] = BASE64[(v >> 12) & 63]
        o[2] = 61
        o[3] = 61
    elif n - i == 2:
        v = (<uint32_t>p[i] << 16) | (<uint32_t>p[i + 1] << 8)
        o[0] = BASE64[v >> 18]
        o[1] = BASE64[(v >> 12) & 63]
        o[2] = BASE64[(v >> 6) & 63]
        o[3] = 61
    out.size += size
    return 0


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


cdef int map_begin(Dec* d, Buf* out, Map* m) noexcept nogil:
    m.head = out.size
    m.entries = m.local
    m.n = 0
    m.cap = NEW_MAP_ENTRIES
    return put_byte(d, out, 0)


cdef int map_add(Dec* d, Map* m, cptr key, Py_ssize_t klen, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    cdef Entry* grown
    if m.n == m.cap:
        grown = <Entry*>malloc(2 * m.cap * sizeof(Entry))
        if grown == NULL:
            return fail(d, "out of memory", NULL)
        memcpy(grown, m.entries, m.n * sizeof(Entry))
        if m.entries != m.local:
            free(m.entries)
        m.entries = grown
        m.cap *= 2
    m.entries[m.n].key = key
    m.entries[m.n].klen = klen
    m.entries[m.n].start = start
    m.entries[m.n].stop = stop
    m.n += 1
    return 0


cdef inline bint same_key(Entry* a, Entry* b) noexcept nogil:
    return a.klen == b.klen and memcmp(a.key, b.key, a.klen) == 0


cdef int first_of(Dec* d, Map* m, Py_ssize_t* first) noexcept nogil:
    """first[i]: the index of the first entry with entry i's key. 1 when a key repeats."""
    cdef Py_ssize_t i, j, size, slot
    cdef Py_ssize_t* table
    cdef uint64_t h
    cdef bint repeats = False
    if m.n <= 64:
        for i in range(m.n):
            first[i] = i
            for j in range(i):
                if same_key(&m.entries[i], &m.entries[j]):
                    first[i] = j
                    repeats = True
                    break
        return repeats
    size = 1
    while size < 2 * m.n:
        size *= 2
    table = <Py_ssize_t*>malloc(size * sizeof(Py_ssize_t))
    if table == NULL:
        return fail(d, "out of memory", NULL)
    for i in range(size):
        table[i] = -1
    for i in range(m.n):
        h = 1469598103934665603ULL  # FNV-1a
        for j in range(m.entries[i].klen):
            h = (h ^ m.entries[i].key[j]) * 1099511628211ULL
        slot = <Py_ssize_t>(h & (size - 1))
        first[i] = i
        while table[slot] >= 0:
            if same_key(&m.entries[i], &m.entries[table[slot]]):
                first[i] = table[slot]
                repeats = True
                break
            slot = (slot + 1) & (size - 1)
        if first[i] == i:
            table[slot] = i
    free(table)
    return repeats


cdef int map_end(Dec* d, Buf* out, Map* m) noexcept nogil:
    """Write the map's head; a repeated key keeps its first place and its last value."""
    cdef Py_ssize_t count = m.n
    cdef Py_ssize_t i, body, size, hlen
    cdef Py_ssize_t* first = NULL
    cdef Py_ssize_t* last = NULL
    cdef uint8_t* copy = NULL
    cdef int r = 0
    cdef Buf head
    body = m.head + 1
    if m.n > 1:
        first = <Py_ssize_t*>malloc(2 * m.n * sizeof(Py_ssize_t))
        if first == NULL:
            r = fail(d, "out of memory", NULL)
        else:
            last = first + m.n
            r = first_of(d, m, first)
        if r == 1:  # rebuild the entries in their order, each key once
            for i in range(m.n):
                last[first[i]] = i
            size = out.size - body
            copy = <uint8_t*>malloc(size if size else 1)
            if copy == NULL:
                r = fail(d, "out of memory", NULL)
            else:
                memcpy(copy, out.data + body, size)
                out.size = body
                count = 0
                for i in range(m.n):
                    if first[i] == i:
                        count += 1
                        put(d, out, copy + m.entries[last[i]].start - body,
                            m.entries[last[i]].stop - m.entries[last[i]].start)
                free(copy)
                r = 0
    free(first)
    if m.entries != m.local:
        free(m.entries)
    if r < 0:
        return -1
    memset(&head, 0, sizeof(Buf))
    if cbor_head(d, &head, 5, count) < 0:
        return -1
    hlen = head.size
    if hlen > 1:
        size = out.size - body
        if reserve(d, out, hlen - 1) < 0:
            free(head.data)
            return -1
        memmove(out.data + body + hlen - 1, out.data + body, size)
        out.size += hlen - 1
    memcpy(out.data + m.head, head.data, hlen)
    free(head.data)
    return 0


# ---- OTLP's common messages: AnyValue, KeyValue -----------------------------------------



cdef int key_value(Dec* d, Buf* out, Map* m, cptr p, cptr end, int depth, cptr* value, Py_ssize_t* vlen) noexcept nogil:
    """A KeyValue as a map entry; ``value``: its AnyValue's bytes (NULL when unset)."""
    cdef Field f
    cdef int r, values = 0
    cdef cptr key = NOTHING
    cdef Py_ssize_t klen = 0, start
    cdef cptr start_p = p
    if nested(d, depth, p) < 0:
        return -1
    value[0] = NULL
    vlen[0] = 0
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r <= 0:
            if r < 0:
                return -1
            break
        if f.wt != 2:
            continue
        if f.num == 1:
            if utf8(d, f.p, f.n, "a KeyValue's key is not UTF-8", f.at) < 0:
                return -1
            key = f.p
            klen = f.n
        elif f.num == 2:
            values += 1
            value[0] = f.p
            vlen[0] = f.n
    if values > 1 and merged(d, start_p, end, 2, depth, value, vlen) < 0:
        return -1
    start = out.size
    if cbor_text(d, out, key, klen) < 0:
        return -1
    if values == 0:
        if put_byte(d, out, 0xF6) < 0:
            return -1
    elif any_value(d, out, value[0], value[0] + vlen[0], depth + 1) < 0:
        return -1
    return map_add(d, m, key, klen, start, out.size)


cdef int key_values(Dec* d, Buf* out, cptr p, cptr end, uint32_t num, int depth) noexcept nogil:
    """The map of the KeyValues in field ``num`` of the message ``p:end`` (``depth``: theirs)."""
    cdef Map m
    cdef Field f
    cdef int r
    cdef cptr value
    cdef Py_ssize_t vlen
    if map_begin(d, out, &m) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r <= 0:
            if r < 0:
                if m.entries != m.local:
                    free(m.entries)
                return -1
            break
        if f.num == num and f.wt == 2 and key_value(d, out, &m, f.p, f.p + f.n, depth, &value, &vlen) < 0:
            if m.entries != m.local:
                free(m.entries)
            return -1
    return map_end(d, out, &m)


cdef int any_value(Dec* d, Buf* out, cptr p, cptr end, int depth) noexcept nogil:
    """An AnyValue as CBOR (its oneof's last field wins; a message field seen again in a
    row is merged). Messages of an earlier, overridden case are still checked."""
    cdef Field f, last
    cdef int r, case = 0, runs = 0, count
    cdef cptr run = NULL  # where the last run of the final message case begins
    cdef cptr q
    cdef cptr value
    cdef Py_ssize_t vlen
    if nested(d, depth, p) < 0:
        return -1
    memset(&last, 0, sizeof(Field))
    q = p
    while True:
        r = next_field(d, &q, end, &f, depth)
        if r <= 0:
            if r < 0:
                return -1
            break
        if not ((f.num == 1 and f.wt == 2) or (f.num == 2 and f.wt == 0) or (f.num == 3 and f.wt == 0)
                or (f.num == 4 and f.wt == 1) or (f.num == 5 and f.wt == 2) or (f.num == 6 and f.wt == 2)
                or (f.num == 7 and f.wt == 2) or (f.num == 8 and f.wt == 0)):
            continue
        if f.num == 1 and utf8(d, f.p, f.n, "a string value is not UTF-8", f.at) < 0:
            return -1
        if f.num >= 5 and f.num <= 6 and case == <int>f.num:
            runs += 1
        elif f.num >= 5 and f.num <= 6:
            if case >= 5 and case <= 6 and check_case(d, case, run, f.at, depth) < 0:
                return -1  # an overridden run is still parsed, as protobuf does
            run = f.at
            runs = 1
        elif case >= 5 and case <= 6 and check_case(d, case, run, f.at, depth) < 0:
            return -1
        case = f.num
        last = f
    d.last_case = case
    if case == 0:
        return put_byte(d, out, 0xF6)
    if case == 1:
        return cbor_text(d, out, last.p, last.n)
    if case == 2:
        return put_byte(d, out, 0xF5 if last.v else 0xF4)
    if case == 3:
        return cbor_int(d, out, <int64_t>last.v)
    if case == 4:
        return cbor_double(d, out, last.v)
    if case == 7:
        return cbor_base64(d, out, last.p, last.n)
    if case == 8:
        return cbor_int(d, out, <int32_t>last.v)
    value = last.p
    vlen = last.n
    if runs > 1 and merged(d, run, end, case, depth, &value, &vlen) < 0:
        return -1
    r = array_value(d, out, value, vlen, depth + 1) if case == 5 else key_values(
        d, out, value, value + vlen, 1, depth + 2
    )
    d.last_case = case
    return r


cdef int array_value(Dec* d, Buf* out, cptr value, Py_ssize_t vlen, int depth) noexcept nogil:
    """An ArrayValue (at ``depth``) as a CBOR array."""
    cdef Field f
    cdef int r, count = 0
    cdef cptr q = value
    if nested(d, depth, value) < 0:
        return -1
    while True:
        r = next_field(d, &q, value + vlen, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.num == 1 and f.wt == 2:
            count += 1
    if cbor_head(d, out, 4, count) < 0:
        return -1
    q = value
    while True:
        r = next_field(d, &q, value + vlen, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            return 0
        if f.num == 1 and f.wt == 2 and any_value(d, out, f.p, f.p + f.n, depth + 1) < 0:
            return -1


cdef int check_case(Dec* d, int case, cptr run, cptr stop, int depth) noexcept nogil:
    """Parse the fields ``case`` of ``run:stop`` (an overridden array or kvlist) and drop them."""
    cdef Field f
    cdef int r
    cdef Py_ssize_t keep = d.scratch.size
    while True:
        r = next_field(d, &run, stop, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            d.scratch.size = keep
            return 0
        if f.num == <uint32_t>case and f.wt == 2:
            if case == 6:
                r = key_values(d, &d.scratch, f.p, f.p + f.n, 1, depth + 2)
            else:
                r = array_value(d, &d.scratch, f.p, f.n, depth + 1)
            if r < 0:
                return -1


cdef int text_value(Dec* d, Buf* out, bint* valid, cptr p, Py_ssize_t n, int depth) noexcept nogil:
    """An AnyValue as a string column's value: a string as it is, others as JSON text
    (bytes as base64), unset as null."""
    cdef Py_ssize_t head
    d.json.size = 0
    if any_value(d, &d.json, p, p + n, depth) < 0:
        return -1
    valid[0] = d.last_case != 0
    if d.last_case == 0:
        return 0
    if d.last_case == 1:  # the CBOR text's head, then the string
        head = 1 if (d.json.data[0] & 31) < 24 else 1 + (1 << ((d.json.data[0] & 31) - 24))
        return put(d, out, d.json.data + head, d.json.size - head)
    with gil:
        try:
            text = orjson.dumps(cbor2.loads(PyBytes_FromStringAndSize(<char*>d.json.data, d.json.size)))
        except Exception:
            return fail(d, "a value cannot be written as JSON", p)
        return put(d, out, <char*>text, len(text))


# ---- resources and scopes ---------------------------------------------------------------

cdef int resource(Dec* d, cptr p, cptr end, int depth) noexcept nogil:
    """A Resource: its attributes and service.name into the context columns' values."""
    cdef Field f
    cdef Map m
    cdef int r
    cdef Py_ssize_t count = 0
    cdef cptr value
    cdef Py_ssize_t vlen, before
    cdef bint found = False
    d.resource_attrs.size = 0
    d.service.size = 0
    d.has_service = False
    d.has_resource_attrs = False
    if p == NULL:
        return 0
    if nested(d, depth, p) < 0 or map_begin(d, &d.resource_attrs, &m) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r <= 0:
            break
        if f.num == 1 and f.wt == 2:
            count += 1
            before = m.n
            r = key_value(d, &d.resource_attrs, &m, f.p, f.p + f.n, depth + 1, &value, &vlen)
            if r < 0:
                break
            if (not found and m.entries[before].klen == 12
                    and memcmp(m.entries[before].key, b"service.name", 12) == 0):
                found = True
                if value != NULL:
                    r = text_value(d, &d.service, &d.has_service, value, vlen, depth + 2)
                    if r < 0:
                        break
        elif f.num == 3 and f.wt == 2:
            r = entity_ref(d, f.p, f.p + f.n, depth + 1)
            if r < 0:
                break
    if r < 0:
        if m.entries != m.local:
            free(m.entries)
        return -1
    if map_end(d, &d.resource_attrs, &m) < 0:
        return -1
    d.has_resource_attrs = count > 0
    return 0


cdef int entity_ref(Dec* d, cptr p, cptr end, int depth) noexcept nogil:
    """An EntityRef: nothing of it is stored, but its strings must be UTF-8."""
    cdef Field f
    cdef int r
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r <= 0:
            return r
        if f.wt == 2 and 1 <= f.num <= 4 and utf8(d, f.p, f.n, "an EntityRef's string is not UTF-8", f.at) < 0:
            return -1


cdef int scope(Dec* d, cptr p, cptr end, int depth) noexcept nogil:
    """An InstrumentationScope into the context columns' values."""
    cdef Field f
    cdef int r
    cdef Py_ssize_t count = 0
    cdef cptr start = p
    d.has_scope_name = d.has_scope_version = d.has_scope_attrs = False
    d.scope_name.size = d.scope_version.size = d.scope_attrs.size = 0
    if p == NULL:
        return 0
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.wt != 2:
            continue
        if f.num == 1 or f.num == 2:
            if utf8(d, f.p, f.n, "a scope's name or version is not UTF-8", f.at) < 0:
                return -1
            if f.num == 1:
                d.scope_name.size = 0
                d.has_scope_name = f.n > 0
                if put(d, &d.scope_name, f.p, f.n) < 0:
                    return -1
            else:
                d.scope_version.size = 0
                d.has_scope_version = f.n > 0
                if put(d, &d.scope_version, f.p, f.n) < 0:
                    return -1
        elif f.num == 3:
            count += 1
    d.has_scope_attrs = count > 0
    return key_values(d, &d.scope_attrs, start, end, 3, depth + 1) if count else 0


cdef int context(Dec* d, Py_ssize_t first, int column) noexcept nogil:
    """The resource and scope columns of the rows ``first:`` (the scope's kept records)."""
    cdef Py_ssize_t row
    cdef Buf* values[5]
    cdef bint present[5]
    cdef int i
    values[:] = [&d.service, &d.resource_attrs, &d.scope_name, &d.scope_version, &d.scope_attrs]
    present[:] = [d.has_service, d.has_resource_attrs, d.has_scope_name, d.has_scope_version,
                  d.has_scope_attrs]
    for i in range(5):
        for row in range(first, d.rows):
            if present[i]:
                if put_var(d, &d.cols[column + i], row, values[i].data, values[i].size) < 0:
                    return -1
            elif put_null(d, &d.cols[column + i], row) < 0:
                return -1
    return 0




cdef int scope_group(Dec* d, cptr p, cptr end, int depth, int context_column) noexcept nogil:
    """A ScopeSpans or ScopeLogs (1 scope, 2 its records, 3 schema_url)."""
    cdef Field f
    cdef int r, scopes = 0
    cdef cptr q = p
    cdef cptr one = NULL
    cdef Py_ssize_t n = 0, first = d.rows
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &q, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.wt == 2 and f.num == 1:
            scopes += 1
            one = f.p
            n = f.n
        elif f.wt == 2 and f.num == 3 and utf8(d, f.p, f.n, "a schema_url is not UTF-8", f.at) < 0:
            return -1
    if scopes > 1 and merged(d, p, end, 1, depth, &one, &n) < 0:
        return -1
    if scope(d, one, one + n, depth + 1) < 0:
        return -1
    q = p
    while True:
        r = next_field(d, &q, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.wt == 2 and f.num == 2:
            d.seen += 1
            if record(d, f.p, f.p + f.n, depth + 1) < 0:
                return -1
    return context(d, first, context_column)


cdef int resource_group(Dec* d, cptr p, cptr end, int depth, int context_column) noexcept nogil:
    """A ResourceSpans or ResourceLogs (1 resource, 2 its scopes, 3 schema_url)."""
    cdef Field f
    cdef int r, resources = 0
    cdef cptr q = p
    cdef cptr one = NULL
    cdef Py_ssize_t n = 0
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &q, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.wt == 2 and f.num == 1:
            resources += 1
            one = f.p
            n = f.n
        elif f.wt == 2 and f.num == 3 and utf8(d, f.p, f.n, "a schema_url is not UTF-8", f.at) < 0:
            return -1
    if resources > 1 and merged(d, p, end, 1, depth, &one, &n) < 0:
        return -1
    if resource(d, one, one + n, depth + 1) < 0:
        return -1
    q = p
    while True:
        r = next_field(d, &q, end, &f, depth)
        if r <= 0:
            return r
        if f.wt == 2 and f.num == 2 and scope_group(d, f.p, f.p + f.n, depth + 1, context_column) < 0:
            return -1


# ---- spans ------------------------------------------------------------------------------

cdef int reject(Dec* d, const char* what, const char* reason) noexcept nogil:
    d.rejected += 1
    if d.rejection[0] == 0:
        snprintf(d.rejection, 200, "%s %zd: %s", what, d.seen, reason)
    return 0


cdef int id_size(Dec* d, char* reason, const char* field, Py_ssize_t n, Py_ssize_t size) noexcept nogil:
    """0, or 1 with ``reason`` set when an id is neither empty nor ``size`` bytes."""
    if n == 0 or n == size:
        return 0
    snprintf(reason, 120, "%s must be %zd bytes, got %zd", field, size, n)
    return 1


cdef int time_past(char* reason, const char* field, uint64_t v) noexcept nogil:
    if v <= <uint64_t>MAX_NANOS:
        return 0
    snprintf(reason, 120, "%s %llu is past the latest timestamp kyma stores", field, <unsigned long long>v)
    return 1


cdef int link(Dec* d, Buf* out, cptr p, cptr end, int depth, char* reason) noexcept nogil:
    """A Link as a CBOR map (``out`` NULL: only its ids checked, into ``reason``)."""
    cdef Field f
    cdef int r, attrs = 0
    cdef cptr start = p
    cdef cptr trace = NULL
    cdef cptr span = NULL
    cdef cptr state = NOTHING
    cdef Py_ssize_t tn = 0, sn = 0, stn = 0, i
    cdef uint8_t hexed[32]
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.wt != 2:
            continue
        if f.num == 1:
            trace, tn = f.p, f.n
        elif f.num == 2:
            span, sn = f.p, f.n
        elif f.num == 3:
            if out == NULL and utf8(d, f.p, f.n, "a link's trace_state is not UTF-8", f.at) < 0:
                return -1
            state, stn = f.p, f.n
        elif f.num == 4:
            attrs += 1
    if out == NULL:
        if id_size(d, reason, "link trace_id", tn, 16) or id_size(d, reason, "link span_id", sn, 8):
            return 1
        return 0
    if cbor_head(d, out, 5, 4) < 0 or key(d, out, "trace_id") < 0:
        return -1
    for i in range(tn):
        hexed[2 * i] = HEX[trace[i] >> 4]
        hexed[2 * i + 1] = HEX[trace[i] & 15]
    if (cbor_text(d, out, hexed, 2 * tn) if tn else put_byte(d, out, 0xF6)) < 0:
        return -1
    if key(d, out, "span_id") < 0:
        return -1
    for i in range(sn):
        hexed[2 * i] = HEX[span[i] >> 4]
        hexed[2 * i + 1] = HEX[span[i] & 15]
    if (cbor_text(d, out, hexed, 2 * sn) if sn else put_byte(d, out, 0xF6)) < 0:
        return -1
    if key(d, out, "trace_state") < 0 or cbor_text(d, out, state, stn) < 0:
        return -1
    if key(d, out, "attributes") < 0:
        return -1
    return key_values(d, out, start, end, 4, depth + 1)


cdef int event(Dec* d, Buf* out, cptr p, cptr end, int depth) noexcept nogil:
    """An Event as a CBOR map: time_unix_nano, name, attributes."""
    cdef Field f
    cdef int r
    cdef cptr start = p
    cdef cptr name = NOTHING
    cdef Py_ssize_t nn = 0
    cdef uint64_t time = 0
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.num == 1 and f.wt == 1:
            time = f.v
        elif f.num == 2 and f.wt == 2:
            if utf8(d, f.p, f.n, "an event's name is not UTF-8", f.at) < 0:
                return -1
            name, nn = f.p, f.n
    if cbor_head(d, out, 5, 3) < 0 or key(d, out, "time_unix_nano") < 0 or cbor_head(d, out, 0, time) < 0:
        return -1
    if key(d, out, "name") < 0 or cbor_text(d, out, name, nn) < 0:
        return -1
    if key(d, out, "attributes") < 0:
        return -1
    return key_values(d, out, start, end, 3, depth + 1)


cdef int repeated(Dec* d, Col* c, Py_ssize_t row, cptr p, cptr end, uint32_t num, int count, int depth) noexcept nogil:
    """A span's events (11) or links (13) as a CBOR array; null when there are none."""
    cdef Field f
    cdef int r
    if count == 0:
        return put_null(d, c, row)
    if cbor_head(d, &c.data, 4, count) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            return end_var(d, c, row, True)
        if f.num == num and f.wt == 2:
            if num == 11:
                r = event(d, &c.data, f.p, f.p + f.n, depth + 1)
            else:
                r = link(d, &c.data, f.p, f.p + f.n, depth + 1, NULL)
            if r < 0:
                return -1


cdef int span(Dec* d, cptr p, cptr end, int depth) noexcept nogil:
    """One Span: a row, or rejected (its bytes still checked, as protobuf parses them)."""
    cdef Field f
    cdef int r, attrs = 0, events = 0, links = 0, statuses = 0
    cdef cptr start_p = p
    cdef cptr trace = NULL
    cdef cptr span_id = NULL
    cdef cptr parent = NULL
    cdef cptr state = NULL
    cdef cptr name = NOTHING
    cdef cptr status = NULL
    cdef Py_ssize_t tn = 0, sn = 0, pn = 0, stn = 0, nn = 0, status_n = 0
    cdef int32_t kind = 0, code = 0
    cdef uint64_t start = 0, finish = 0
    cdef char reason[120]
    cdef char link_reason[120]
    cdef bint bad_link = False
    cdef cptr message = NULL
    cdef Py_ssize_t mn = 0
    cdef Py_ssize_t row = d.rows
    cdef Col* c = d.cols
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.wt == 2:
            if f.num == 1:
                trace, tn = f.p, f.n
            elif f.num == 2:
                span_id, sn = f.p, f.n
            elif f.num == 4:
                parent, pn = f.p, f.n
            elif f.num == 3 or f.num == 5:
                if utf8(d, f.p, f.n, "a span's trace_state or name is not UTF-8", f.at) < 0:
                    return -1
                if f.num == 3:
                    state, stn = f.p, f.n
                else:
                    name, nn = f.p, f.n
            elif f.num == 9:
                attrs += 1
            elif f.num == 11:
                events += 1
            elif f.num == 13:
                links += 1
                r = link(d, NULL, f.p, f.p + f.n, depth + 1, <char*>reason if bad_link else <char*>link_reason)
                if r < 0:
                    return -1
                bad_link = bad_link or r == 1
            elif f.num == 15:
                statuses += 1
                status, status_n = f.p, f.n
        elif f.wt == 0 and f.num == 6:
            kind = <int32_t>f.v
        elif f.wt == 1 and f.num == 7:
            start = f.v
        elif f.wt == 1 and f.num == 8:
            finish = f.v
    if statuses > 1 and merged(d, start_p, end, 15, depth, &status, &status_n) < 0:
        return -1
    if statuses:  # Status: 2 message, 3 code
        if nested(d, depth + 1, status) < 0:
            return -1
        p = status
        while True:
            r = next_field(d, &p, status + status_n, &f, depth + 1)
            if r < 0:
                return -1
            if r == 0:
                break
            if f.num == 2 and f.wt == 2:
                if utf8(d, f.p, f.n, "a status message is not UTF-8", f.at) < 0:
                    return -1
                message, mn = f.p, f.n
            elif f.num == 3 and f.wt == 0:
                code = <int32_t>f.v
    if (id_size(d, reason, "trace_id", tn, 16) or id_size(d, reason, "span_id", sn, 8)
            or id_size(d, reason, "parent_span_id", pn, 8)
            or time_past(reason, "start_time_unix_nano", start)
            or time_past(reason, "end_time_unix_nano", finish)):
        reject(d, "span", reason)
    elif bad_link:
        reject(d, "span", link_reason)
    else:
        d.rows += 1
    if (put_int(d, &c[S_START], row, start) if start else put_null(d, &c[S_START], row)) < 0:
        return -1
    if (put_int(d, &c[S_END], row, finish) if finish else put_null(d, &c[S_END], row)) < 0:
        return -1
    if start and finish:
        r = put_int(d, &c[S_DURATION], row, <int64_t>finish - <int64_t>start)
    else:
        r = put_null(d, &c[S_DURATION], row)
    if r < 0:
        return -1
    if (put_hex(d, &c[S_TRACE], row, trace, tn) < 0 or put_hex(d, &c[S_SPAN], row, span_id, sn) < 0
            or put_hex(d, &c[S_PARENT], row, parent, pn) < 0):
        return -1
    if (put_var(d, &c[S_STATE], row, state, stn) if stn else put_null(d, &c[S_STATE], row)) < 0:
        return -1
    if put_var(d, &c[S_NAME], row, name, nn) < 0:
        return -1
    if put_name(d, &c[S_KIND], row, kind, KIND_NAMES, 6) < 0:
        return -1
    if put_name(d, &c[S_CODE], row, code, CODE_NAMES, 3) < 0:
        return -1
    if (put_var(d, &c[S_MESSAGE], row, message, mn) if mn else put_null(d, &c[S_MESSAGE], row)) < 0:
        return -1
    if attrs:
        if key_values(d, &c[S_ATTRS].data, start_p, end, 9, depth + 1) < 0:
            return -1
        r = end_var(d, &c[S_ATTRS], row, True)
    else:
        r = put_null(d, &c[S_ATTRS], row)
    if r < 0:
        return -1
    if repeated(d, &c[S_EVENTS], row, start_p, end, 11, events, depth) < 0:
        return -1
    if repeated(d, &c[S_LINKS], row, start_p, end, 13, links, depth) < 0:
        return -1
    if d.rows == row:  # rejected
        rollback(d, row)
    return 0


# ---- log records ------------------------------------------------------------------------

cdef int log_record(Dec* d, cptr p, cptr end, int depth) noexcept nogil:
    """One LogRecord: a row, or rejected (its bytes still checked)."""
    cdef Field f
    cdef int r, attrs = 0, bodies = 0
    cdef cptr start_p = p
    cdef cptr trace = NULL
    cdef cptr span_id = NULL
    cdef cptr severity = NULL
    cdef cptr event_name = NULL
    cdef cptr body = NULL
    cdef Py_ssize_t tn = 0, sn = 0, svn = 0, en = 0, bn = 0
    cdef int32_t number = 0
    cdef uint32_t flags = 0
    cdef uint64_t time = 0, observed = 0
    cdef char reason[120]
    cdef bint valid
    cdef Py_ssize_t row = d.rows
    cdef Col* c = d.cols
    if nested(d, depth, p) < 0:
        return -1
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r < 0:
            return -1
        if r == 0:
            break
        if f.wt == 2:
            if f.num == 9:
                trace, tn = f.p, f.n
            elif f.num == 10:
                span_id, sn = f.p, f.n
            elif f.num == 3 or f.num == 12:
                if utf8(d, f.p, f.n, "a severity_text or event_name is not UTF-8", f.at) < 0:
                    return -1
                if f.num == 3:
                    severity, svn = f.p, f.n
                else:
                    event_name, en = f.p, f.n
            elif f.num == 5:
                bodies += 1
                body, bn = f.p, f.n
            elif f.num == 6:
                attrs += 1
        elif f.wt == 1 and f.num == 1:
            time = f.v
        elif f.wt == 1 and f.num == 11:
            observed = f.v
        elif f.wt == 0 and f.num == 2:
            number = <int32_t>f.v
        elif f.wt == 5 and f.num == 8:
            flags = <uint32_t>f.v
    if bodies > 1 and merged(d, start_p, end, 5, depth, &body, &bn) < 0:
        return -1
    if (id_size(d, reason, "trace_id", tn, 16) or id_size(d, reason, "span_id", sn, 8)
            or time_past(reason, "time_unix_nano", time)
            or time_past(reason, "observed_time_unix_nano", observed)):
        reject(d, "log record", reason)
    else:
        d.rows += 1
    if time == 0:
        time = observed
    if (put_int(d, &c[L_TIME], row, time) if time else put_null(d, &c[L_TIME], row)) < 0:
        return -1
    if (put_int(d, &c[L_OBSERVED], row, observed) if observed else put_null(d, &c[L_OBSERVED], row)) < 0:
        return -1
    if (put_int(d, &c[L_SEVERITY], row, number) if number else put_null(d, &c[L_SEVERITY], row)) < 0:
        return -1
    if (put_var(d, &c[L_SEVERITY_TEXT], row, severity, svn) if svn else put_null(d, &c[L_SEVERITY_TEXT], row)) < 0:
        return -1
    valid = False
    if bodies and text_value(d, &c[L_BODY].data, &valid, body, bn, depth + 1) < 0:
        return -1
    if end_var(d, &c[L_BODY], row, valid) < 0:
        return -1
    if attrs:
        if key_values(d, &c[L_ATTRS].data, start_p, end, 6, depth + 1) < 0:
            return -1
        r = end_var(d, &c[L_ATTRS], row, True)
    else:
        r = put_null(d, &c[L_ATTRS], row)
    if r < 0:
        return -1
    if put_hex(d, &c[L_TRACE], row, trace, tn) < 0 or put_hex(d, &c[L_SPAN], row, span_id, sn) < 0:
        return -1
    if (put_int(d, &c[L_FLAGS], row, flags & 0xFF) if tn else put_null(d, &c[L_FLAGS], row)) < 0:
        return -1
    if (put_var(d, &c[L_EVENT], row, event_name, en) if en else put_null(d, &c[L_EVENT], row)) < 0:
        return -1
    if d.rows == row:
        rollback(d, row)
    return 0


cdef int record(Dec* d, cptr p, cptr end, int depth) noexcept nogil:
    if d.ncols == S_COLUMNS:
        return span(d, p, end, depth)
    return log_record(d, p, end, depth)


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
    when the bytes are not a valid request."""
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
                r = fail(&d, "out of memory", NULL)
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
            raise ValueError((<char*>d.error).decode("utf-8", "replace"))
        columns = [
            (taken(&d.cols[i].valid), taken(&d.cols[i].values),
             taken(&d.cols[i].data) if d.cols[i].kind == VAR else None)
            for i in range(d.ncols)
        ]
        return d.rows, d.seen, d.rejected, (<char*>d.rejection).decode(), columns
    finally:
        release(&d)
