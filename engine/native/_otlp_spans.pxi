# A Span into a row of the traces table (included by otlp_wire.pyx)

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
