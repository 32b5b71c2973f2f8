# Reading the protobuf wire format as protobuf does: fields, groups, UTF-8, merges (included
# by otlp_wire.pyx)

cdef inline int varint(Dec* d, cptr* pos, cptr end, uint64_t* out, int longest=10) noexcept nogil:
    """A varint of at most ``longest`` bytes (protobuf takes tags and lengths of 5 at most)."""
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
        if shift >= 7 * longest:
            if longest == 5:
                return fail(d, "a tag or length is longer than 5 bytes", pos[0])
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
        if varint(d, pos, end, &tag, 5) < 0:
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
            if varint(d, pos, end, &f.v, 5) < 0:
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
        if varint(d, pos, end, &tag, 5) < 0:
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
            if varint(d, pos, end, &ignored, 5) < 0:
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
    one message: its occurrences concatenated (protobuf merges them so), each checked to
    end where its own fields do (a field running into the next one is protobuf's error)."""
    cdef Field f, inner
    cdef Buf joined
    cdef int r
    cdef cptr q
    memset(&joined, 0, sizeof(Buf))
    while True:
        r = next_field(d, &p, end, &f, depth)
        if r == 0:
            break
        if r > 0 and f.num == num and f.wt == 2:
            q = f.p
            r = 1
            while r > 0:
                r = next_field(d, &q, f.p + f.n, &inner, depth + 1)
            if r == 0:
                r = put(d, &joined, f.p, f.n)
        if r < 0:
            free(joined.data)
            return -1
    if put(d, &d.arena, &joined.data, sizeof(void*)) < 0:
        free(joined.data)
        return -1
    out[0] = joined.data
    n[0] = joined.size
    return 0
