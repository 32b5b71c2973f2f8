# OTLP's AnyValue and KeyValue as CBOR, and an AnyValue as a text column's value (included by otlp_wire.pyx)


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
    cdef int r, case = 0, runs = 0
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
