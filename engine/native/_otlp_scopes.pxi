# Resources and scopes (the values of every table's last five columns), and what spans and
# log records share: which table a record fills, and leaving a record out (included by
# otlp_wire.pyx)

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
        if present[i] and values[i].size * (d.rows - first) > 0x7FFFFFFF - d.cols[column + i].data.size:
            return give_up(d, CAPACITY, "a column's values are over 2 GiB")
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


cdef int record(Dec* d, cptr p, cptr end, int depth) noexcept nogil:
    """A span or a log record, as the table being filled holds."""
    if d.ncols == S_COLUMNS:
        return span(d, p, end, depth)
    return log_record(d, p, end, depth)


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
