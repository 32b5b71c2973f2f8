# Writing CBOR as cbor2.dumps does, maps with each key once (included by otlp_wire.pyx)


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
            return give_up(d, MEMORY, "out of memory")
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
        return give_up(d, MEMORY, "out of memory")
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
            r = give_up(d, MEMORY, "out of memory")
        else:
            last = first + m.n
            r = first_of(d, m, first)
        if r == 1:  # rebuild the entries in their order, each key once
            for i in range(m.n):
                last[first[i]] = i
            size = out.size - body
            copy = <uint8_t*>malloc(size if size else 1)
            if copy == NULL:
                r = give_up(d, MEMORY, "out of memory")
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
