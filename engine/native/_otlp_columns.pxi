# Growable buffers, and writing values into the Arrow columns' buffers (included by otlp_wire.pyx)

cdef int fail(Dec* d, const char* what, cptr at) noexcept nogil:
    if d.error[0] != 0:
        return -1
    if at >= d.body and at <= d.body_end:
        snprintf(d.error, 200, "%s at byte %zd", what, <Py_ssize_t>(at - d.body))
    else:
        snprintf(d.error, 200, "%s (in a repeated message merged as protobuf does)", what)
    return -1


cdef int give_up(Dec* d, int failure, const char* what) noexcept nogil:
    """Stop for a reason that is not the input's fault."""
    if d.error[0] == 0:
        d.failure = failure
        snprintf(d.error, 200, "%s", what)
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
        return give_up(d, MEMORY, "out of memory")
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
        return give_up(d, CAPACITY, "a column's values are over 2 GiB")
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
