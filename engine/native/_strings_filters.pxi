# strings.pyx's word and trigram bloom filters (included there: they read its view of a
# string array and hash words with its word hash).


def word_hash(bytes word):
    """The 64-bit hash a word bloom filter sets its bits by (of the word's bytes as given)."""
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(word)
    cdef int64_t n = len(word)
    cdef uint64_t h = 0
    cdef int64_t i
    for i in range(n):
        h = h * BASE + p[i]
    return fmix(h ^ <uint64_t>n)


def word_filter(values, int64_t bits_per_word, int64_t hashes, int64_t max_bytes):
    """The bloom filter of ``values`` (distinct, no nulls): ``bits_per_word`` bits a value
    rounded up to 64, ``hashes`` bits set a value by double hashing; None past
    ``max_bytes``."""
    cdef list chunks = chunks_of(values)
    cdef int64_t size = (len(values) * bits_per_word + 63) // 64 * 8
    if size > max_bytes:
        return None
    out = PyBytes_FromStringAndSize(NULL, size)
    cdef uint8_t* bits = <uint8_t*>PyBytes_AS_STRING(out)
    memset(bits, 0, size)
    cdef uint64_t total = <uint64_t>size * 8
    cdef View v
    cdef int64_t i, j, k, start, end
    cdef uint64_t h, low, high, where
    for chunk in chunks:
        v = view_of(chunk)
        with nogil:
            for i in range(v.length):
                start, end = start_of(&v, i), start_of(&v, i + 1)
                h = 0
                for j in range(start, end):
                    h = h * BASE + v.data[j]
                h = fmix(h ^ <uint64_t>(end - start))
                low = h & 0xFFFFFFFFULL
                high = (h >> 32) | 1
                for k in range(hashes):
                    where = (low + <uint64_t>k * high) % total
                    bits[where >> 3] |= 1 << (where & 7)
    return out


def gram_filters(values, int64_t rows, multipliers, int64_t bits_per_gram, int64_t max_bits):
    """Per page of ``rows`` values, the bloom filter of the distinct byte trigrams of its
    ASCII-lowercased values (a trigram never spans two; null values' bytes count):
    ``bits_per_gram`` bits a trigram rounded up to a power of two, at least 64; bit
    ``(g * m) >> (64 - log2(bits))`` set for each odd ``m`` of ``multipliers``. None for
    a page whose filter would pass ``max_bits`` (a power of two)."""
    cdef list chunks = chunks_of(values)
    if len(chunks) != 1:
        values = pa.concat_arrays(chunks) if chunks else pa.array([], values.type)
    else:
        values = chunks[0]
    cdef View v = view_of(values)
    cdef int64_t limit = max_bits // bits_per_gram
    cdef int64_t count = len(multipliers)
    cdef uint64_t* odd = <uint64_t*>malloc(count * sizeof(uint64_t))
    cdef uint32_t* seen = <uint32_t*>calloc(1 << 19, sizeof(uint32_t))  # a bit per trigram
    cdef uint32_t* found = <uint32_t*>malloc((limit + 1) * sizeof(uint32_t))
    cdef int64_t page, last, i, j, start, end, n, size, shift, k
    cdef uint32_t g
    cdef uint64_t where
    cdef uint8_t* bits
    out = []
    try:
        if odd == NULL or seen == NULL or found == NULL:
            raise MemoryError()
        for k in range(count):
            odd[k] = multipliers[k]
        for page in range(0, v.length, rows):
            last = min(page + rows, v.length)
            n = 0
            with nogil:
                for i in range(page, last):
                    start, end = start_of(&v, i), start_of(&v, i + 1)
                    for j in range(start, end - 2):
                        g = (
                            LOWER[v.data[j]]
                            | <uint32_t>LOWER[v.data[j + 1]] << 8
                            | <uint32_t>LOWER[v.data[j + 2]] << 16
                        )
                        if not (seen[g >> 5] >> (g & 31)) & 1:
                            seen[g >> 5] |= 1u << (g & 31)
                            found[n] = g
                            n += 1
                            if n > limit:
                                break
                    if n > limit:
                        break
                for i in range(n):
                    seen[found[i] >> 5] = 0
            if n > limit:
                out.append(None)
                continue
            size, shift = 64, 58
            while size < n * bits_per_gram:
                size, shift = size * 2, shift - 1
            filter_bytes = PyBytes_FromStringAndSize(NULL, size // 8)
            bits = <uint8_t*>PyBytes_AS_STRING(filter_bytes)
            with nogil:
                memset(bits, 0, size // 8)
                for i in range(n):
                    for k in range(count):
                        where = (<uint64_t>found[i] * odd[k]) >> shift
                        bits[where >> 3] |= 1 << (where & 7)
            out.append(filter_bytes)
        return out
    finally:
        free(odd)
        free(seen)
        free(found)
