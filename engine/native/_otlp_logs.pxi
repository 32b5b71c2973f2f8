# A LogRecord into a row of the logs table (included by otlp_wire.pyx)

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
