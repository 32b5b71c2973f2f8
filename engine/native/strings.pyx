# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Kernels over Arrow string arrays' bytes for the extent write: words, distinct values,
trigram and word bloom filters, spaces.

Each reads a string or large string array (or a chunked one) straight from its offsets,
validity and data buffers in one pass without the GIL; null values are skipped (a
trigram filter reads their bytes too). Arrow has no kernel for these: its regular
expression split, ``unique`` and ``count_distinct`` cost many passes and cannot stop once
a cap is passed (BENCHMARKS.md, "Tokenizing in a compiled helper").

A word is a maximal run of ASCII letters and digits of a value, ASCII-lowercased, of two
bytes or more: what splitting the ASCII-lowercased bytes on ``[^a-z0-9]+`` gives.

>>> import pyarrow as pa
>>> sorted(words(pa.array(["GET /Api/v2 ok", None, "a b-cd é2x"])).to_pylist())
['2x', 'api', 'cd', 'get', 'ok', 'v2']
>>> words(pa.array(["id-10", "id-11"]), 2) is None
True
>>> count_distinct(pa.array(["a", "b", "a", None])), count_distinct(pa.array(["a", "b", "c"]), 1)
(2, 2)
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memset

import pyarrow as pa

# The word hash (a polynomial over the bytes, then murmur3's finalizer) is the token bloom
# filter's: filters written before keep answering (engine/format/_token_bloom.py).
cdef extern from *:
    """
    #define KYMA_BASE 0x100000001B3ULL
    #define KYMA_MIX1 0xFF51AFD7ED558CCDULL
    #define KYMA_MIX2 0xC4CEB9FE1A85EC53ULL
    """
    const uint64_t BASE "KYMA_BASE"
    const uint64_t MIX1 "KYMA_MIX1"
    const uint64_t MIX2 "KYMA_MIX2"

cdef uint8_t IS_WORD[256]
cdef uint8_t LOWER[256]
for _b in range(256):
    LOWER[_b] = _b + 32 if 65 <= _b <= 90 else _b
    IS_WORD[_b] = 48 <= _b <= 57 or 65 <= _b <= 90 or 97 <= _b <= 122


cdef inline uint64_t fmix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= MIX1
    h ^= h >> 33
    h *= MIX2
    h ^= h >> 33
    return h


cdef inline uint64_t value_hash(const uint8_t* p, int64_t n) noexcept nogil:
    """A hash of a value's bytes, eight at a time (distinct values only: any good mix);
    the last eight overlap the ones before, and values under eight bytes are read byte by
    byte (no copy of a variable length: its store would stall the load)."""
    cdef uint64_t h = <uint64_t>n * 0x9E3779B97F4A7C15ULL
    cdef uint64_t w = 0
    cdef int64_t i = 0
    if n < 8:
        for i in range(n):
            w |= <uint64_t>p[i] << (8 * i)
        return fmix((h ^ (w * 0x87C37B91114253D5ULL)) * 0x4CF5AD432745937FULL)
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        h = (h ^ (w * 0x87C37B91114253D5ULL)) * 0x4CF5AD432745937FULL
        h = (h << 27) | (h >> 37)
        i += 8
    if i < n:
        memcpy(&w, p + n - 8, 8)
        h = (h ^ (w * 0x87C37B91114253D5ULL)) * 0x4CF5AD432745937FULL
    return fmix(h)


cdef inline bint same(const uint8_t* a, const uint8_t* b, int64_t n) noexcept nogil:
    """Whether ``n`` bytes at ``a`` and ``b`` are equal: eight at a time, the last eight
    overlapping (a call to ``memcmp`` costs more than the short words it compares)."""
    cdef uint64_t x, y
    cdef int64_t i = 0
    if n < 8:
        for i in range(n):
            if a[i] != b[i]:
                return False
        return True
    while i + 8 <= n:
        memcpy(&x, a + i, 8)
        memcpy(&y, b + i, 8)
        if x != y:
            return False
        i += 8
    memcpy(&x, a + n - 8, 8)
    memcpy(&y, b + n - 8, 8)
    return x == y


# One chunk of a string array: its buffers, from its first value.
cdef struct View:
    const uint8_t* data
    const uint8_t* validity  # NULL: no nulls
    const int32_t* narrow    # the offsets, one of the two
    const int64_t* wide
    int64_t first            # the array's offset (into offsets and validity bits)
    int64_t length


cdef inline int64_t start_of(const View* v, int64_t i) noexcept nogil:
    return v.wide[v.first + i] if v.wide != NULL else v.narrow[v.first + i]


cdef inline bint valid(const View* v, int64_t i) noexcept nogil:
    cdef int64_t bit = v.first + i
    return v.validity == NULL or (v.validity[bit >> 3] >> (bit & 7)) & 1


cdef inline const uint8_t* address(object buffer):
    return <const uint8_t*><uintptr_t>buffer.address


cdef View view_of(object chunk) except *:
    cdef View v
    validity, offsets, data = chunk.buffers()
    v.length = len(chunk)
    v.first = chunk.offset
    v.validity = NULL
    if validity is not None and chunk.null_count:
        v.validity = address(validity)
    v.data = NULL
    if data is not None:
        v.data = address(data)
    v.wide, v.narrow = NULL, NULL
    if pa.types.is_large_string(chunk.type):
        v.wide = <const int64_t*>address(offsets)
    else:
        v.narrow = <const int32_t*>address(offsets)
    return v


cdef list chunks_of(object values):
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise TypeError(f"expected strings, got {values.type!r}")
    return values.chunks if isinstance(values, pa.ChunkedArray) else [values]


# Distinct byte strings, packed one after another (``starts``), in a table of their
# indices by hash (open addressing, at most half full).
cdef struct Set:
    uint8_t* data
    int64_t used
    int64_t room
    int64_t* starts  # count + 1 of them
    uint64_t* hashes
    int64_t count
    int64_t capacity  # of starts and hashes
    int32_t* slots    # -1: empty
    uint64_t mask


cdef int set_init(Set* s, int64_t room) except -1 nogil:
    s.room = room if room > 64 else 64
    s.used = 0
    s.count = 0
    s.capacity = 1024
    s.mask = 2047
    s.data = <uint8_t*>malloc(s.room)
    s.starts = <int64_t*>malloc((s.capacity + 1) * sizeof(int64_t))
    s.hashes = <uint64_t*>malloc(s.capacity * sizeof(uint64_t))
    s.slots = <int32_t*>malloc((s.mask + 1) * sizeof(int32_t))
    if s.data == NULL or s.starts == NULL or s.hashes == NULL or s.slots == NULL:
        set_free(s)
        with gil:
            raise MemoryError()
    memset(s.slots, 0xFF, (s.mask + 1) * sizeof(int32_t))
    s.starts[0] = 0
    return 0


cdef void set_free(Set* s) noexcept nogil:
    free(s.data)
    free(s.starts)
    free(s.hashes)
    free(s.slots)
    s.data = NULL
    s.starts = NULL
    s.hashes = NULL
    s.slots = NULL


cdef int reserve(Set* s, int64_t n) except -1 nogil:
    """Room for ``n`` more bytes at ``s.data + s.used``."""
    cdef int64_t room = s.room
    cdef uint8_t* data
    if s.used + n <= room:
        return 0
    while s.used + n > room:
        room *= 2
    data = <uint8_t*>realloc(s.data, room)
    if data == NULL:
        with gil:
            raise MemoryError()
    s.data, s.room = data, room
    return 0


cdef int grow(Set* s) except -1 nogil:
    cdef int64_t capacity = s.capacity * 2
    cdef uint64_t mask = s.mask * 2 + 1
    cdef int64_t* starts = <int64_t*>realloc(s.starts, (capacity + 1) * sizeof(int64_t))
    if starts == NULL:
        with gil:
            raise MemoryError()
    s.starts = starts
    cdef uint64_t* hashes = <uint64_t*>realloc(s.hashes, capacity * sizeof(uint64_t))
    if hashes == NULL:
        with gil:
            raise MemoryError()
    s.hashes = hashes
    cdef int32_t* slots = <int32_t*>malloc((mask + 1) * sizeof(int32_t))
    if slots == NULL:
        with gil:
            raise MemoryError()
    memset(slots, 0xFF, (mask + 1) * sizeof(int32_t))
    cdef int64_t e
    cdef uint64_t i
    for e in range(s.count):
        i = s.hashes[e] & mask
        while slots[i] >= 0:
            i = (i + 1) & mask
        slots[i] = <int32_t>e
    free(s.slots)
    s.slots, s.mask, s.capacity = slots, mask, capacity
    return 0


cdef int add(Set* s, const uint8_t* p, int64_t n, uint64_t h) except -1 nogil:
    """Add the ``n`` bytes at ``p`` (hash ``h``) unless held: 1 if added, 0 if held. A
    ``p`` at ``s.data + s.used`` (written there after ``reserve``) is not copied."""
    cdef uint64_t i = h & s.mask
    cdef int32_t e
    while True:
        e = s.slots[i]
        if e < 0:
            break
        if (
            s.hashes[e] == h
            and s.starts[e + 1] - s.starts[e] == n
            and same(s.data + s.starts[e], p, n)
        ):
            return 0
        i = (i + 1) & s.mask
    if p != s.data + s.used and n:
        reserve(s, n)
        memcpy(s.data + s.used, p, n)
    s.slots[i] = <int32_t>s.count
    s.hashes[s.count] = h
    s.used += n
    s.count += 1
    s.starts[s.count] = s.used
    if s.count * 2 > <int64_t>s.mask or s.count >= s.capacity:
        grow(s)
    return 1


cdef int add_words(Set* s, const View* v, int64_t limit) except -1 nogil:
    """Add the words of a chunk's valid values; stop once past ``limit`` (-1: none)."""
    cdef const uint8_t* data = v.data
    cdef int64_t i, j, start, end, n
    cdef uint64_t h
    cdef uint8_t b
    cdef uint8_t* out
    for i in range(v.length):
        if not valid(v, i):
            continue
        start, end = start_of(v, i), start_of(v, i + 1)
        reserve(s, end - start)
        j = start
        while j < end:
            if not IS_WORD[data[j]]:
                j += 1
                continue
            out = s.data + s.used
            n, h = 0, 0
            while j < end and IS_WORD[data[j]]:
                b = LOWER[data[j]]
                out[n] = b
                h = h * BASE + b
                n += 1
                j += 1
            if n >= 2 and add(s, out, n, fmix(h ^ <uint64_t>n)):
                if 0 <= limit < s.count:
                    return 1
    return 0


cdef int add_values(Set* s, const View* v, int64_t limit) except -1 nogil:
    """Add a chunk's valid values; stop once past ``limit`` (-1: none)."""
    cdef const uint8_t* data = v.data
    cdef int64_t i, start, n
    for i in range(v.length):
        if not valid(v, i):
            continue
        start = start_of(v, i)
        n = start_of(v, i + 1) - start
        if add(s, data + start, n, value_hash(data + start, n)):
            if 0 <= limit < s.count:
                return 1
    return 0


cdef object strings(Set* s, object kind):
    """The set's strings as an Arrow array of ``kind`` (string or large string)."""
    cdef bint wide = pa.types.is_large_string(kind)
    cdef int64_t i
    offsets = PyBytes_FromStringAndSize(NULL, (s.count + 1) * (8 if wide else 4))
    cdef char* out = PyBytes_AS_STRING(offsets)
    if wide:
        memcpy(out, s.starts, (s.count + 1) * sizeof(int64_t))
    else:
        for i in range(s.count + 1):
            (<int32_t*>out)[i] = <int32_t>s.starts[i]
    data = PyBytes_FromStringAndSize(<char*>s.data, s.used)
    return pa.Array.from_buffers(kind, s.count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


cdef int64_t byte_count(list chunks):
    cdef int64_t total = 0
    cdef View v
    for chunk in chunks:
        v = view_of(chunk)
        if v.length:
            total += start_of(&v, v.length) - start_of(&v, 0)
    return total


def words(values, int64_t limit=-1):
    """The distinct words of ``values``' non-null strings, as an array of their type (in
    the order first seen); None when there are more than ``limit`` (-1: no limit)."""
    return collected(values, limit, True)


def distinct(values, int64_t limit=-1):
    """The distinct non-null values of ``values`` (strings, or 32- or 64-bit integers), as
    an array of their type (in the order first seen); None when there are more than
    ``limit`` (-1: no limit)."""
    if pa.types.is_int32(values.type) or pa.types.is_int64(values.type):
        return distinct_integers(values, limit)
    return collected(values, limit, False)


cdef object collected(object values, int64_t limit, bint split):
    """The distinct words (``split``) or values of ``values``' strings, or None past ``limit``."""
    cdef list chunks = chunks_of(values)
    cdef Set s
    cdef View v
    cdef int past = 0
    set_init(&s, min(byte_count(chunks), 1 << 16))
    try:
        for chunk in chunks:
            v = view_of(chunk)
            with nogil:
                past = add_words(&s, &v, limit) if split else add_values(&s, &v, limit)
            if past:
                return None
        return strings(&s, values.type)
    finally:
        set_free(&s)


cdef object distinct_integers(object values, int64_t limit):
    cdef list chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    cdef bint wide = pa.types.is_int64(values.type)
    cdef int64_t total = len(values) - values.null_count
    cdef int64_t room = min(total, limit + 1) if limit >= 0 else total
    cdef uint64_t mask = 63
    while mask + 1 < <uint64_t>(2 * room + 2):
        mask = mask * 2 + 1
    cdef int64_t* keys = <int64_t*>malloc((mask + 1) * sizeof(int64_t))
    cdef uint8_t* used = <uint8_t*>calloc(mask + 1, 1)
    cdef int64_t* found = <int64_t*>malloc((room + 1) * sizeof(int64_t))
    cdef int64_t n = 0, i, key, first
    cdef uint64_t at
    cdef const uint8_t* validity
    cdef const int32_t* narrow
    cdef const int64_t* long_values
    cdef int64_t length
    cdef bint past = False
    try:
        if keys == NULL or used == NULL or found == NULL:
            raise MemoryError()
        for chunk in chunks:
            if not len(chunk):
                continue
            bitmap, data = chunk.buffers()
            validity = NULL
            if bitmap is not None and chunk.null_count:
                validity = address(bitmap)
            narrow = <const int32_t*>address(data)
            long_values = <const int64_t*>address(data)
            first, length = chunk.offset, len(chunk)
            with nogil:
                for i in range(first, first + length):
                    if validity != NULL and not (validity[i >> 3] >> (i & 7)) & 1:
                        continue
                    key = long_values[i] if wide else narrow[i]
                    at = fmix(<uint64_t>key) & mask
                    while used[at] and keys[at] != key:
                        at = (at + 1) & mask
                    if used[at]:
                        continue
                    used[at], keys[at] = 1, key
                    found[n] = key
                    n += 1
                    if 0 <= limit < n:
                        past = True
                        break
            if past:
                return None
        out = PyBytes_FromStringAndSize(NULL, n * (8 if wide else 4))
        if wide:
            memcpy(PyBytes_AS_STRING(out), found, n * 8)
        else:
            for i in range(n):
                (<int32_t*>PyBytes_AS_STRING(out))[i] = <int32_t>found[i]
        return pa.Array.from_buffers(values.type, n, [None, pa.py_buffer(out)])
    finally:
        free(keys)
        free(used)
        free(found)


def count_distinct(values, int64_t limit=-1):
    """How many distinct non-null values ``values`` (strings, or 32- or 64-bit integers)
    holds, counted up to ``limit + 1`` at most (-1: all)."""
    if pa.types.is_int32(values.type) or pa.types.is_int64(values.type):
        found = distinct_integers(values, limit)
        return limit + 1 if found is None else len(found)
    cdef list chunks = chunks_of(values)
    cdef Set s
    cdef View v
    set_init(&s, min(byte_count(chunks), 1 << 16))
    try:
        for chunk in chunks:
            v = view_of(chunk)
            with nogil:
                add_values(&s, &v, limit)
            if 0 <= limit < s.count:
                break
        return s.count
    finally:
        set_free(&s)


include "_strings_filters.pxi"


cdef inline int64_t count_spaces(const uint8_t* data, int64_t n) noexcept nogil:
    cdef int64_t total = 0, i
    for i in range(n):
        total += data[i] == 32
    return total


def spaces(values):
    """The spaces (byte 0x20) in ``values``' non-null strings."""
    cdef int64_t total = 0, i, start
    cdef View v
    for chunk in chunks_of(values):
        v = view_of(chunk)
        if not v.length or v.data == NULL:
            continue
        with nogil:
            if v.validity == NULL:  # the values' bytes are one run
                start = start_of(&v, 0)
                total += count_spaces(v.data + start, start_of(&v, v.length) - start)
            else:
                for i in range(v.length):
                    if valid(&v, i):
                        start = start_of(&v, i)
                        total += count_spaces(v.data + start, start_of(&v, i + 1) - start)
    return total
