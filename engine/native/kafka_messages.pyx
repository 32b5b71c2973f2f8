# cython: boundscheck=False, wraparound=False, initializedcheck=False
"""A polled round of confluent-kafka messages read in one C loop: their values joined into
one NDJSON body, and where each came from (topic, partition, offset) as arrays.

The client hands over one Python object per message; this reads each one's fields with
C-level calls and copies its value once, with no Python object per message of its own.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.ref cimport PyObject, Py_DECREF, Py_INCREF
from libc.stdlib cimport free, malloc
from libc.string cimport memchr, memcpy

import numpy as np


def gather(list messages, list topics):
    """``(body, topic_codes, partitions, offsets)`` of ``messages`` (non-empty, all without
    an error): ``body`` is their values joined by newlines when each is one JSON object on
    one line (it starts with ``{`` and holds no newline), else None; ``topic_codes`` (int32)
    each message's index into ``topics`` (a topic not in it yet is appended),
    ``partitions`` (int32) and ``offsets`` (int64) each message's."""
    cdef Py_ssize_t n = len(messages), i, size, total = 0
    cdef bint one_line = True
    cdef object message, value, topic, last = None
    cdef const char *data
    cdef char *out
    cdef int code = -1
    kind = type(messages[0])
    value_of, topic_of, partition_of, offset_of = kind.value, kind.topic, kind.partition, kind.offset
    topic_codes = np.empty(n, np.int32)
    partitions = np.empty(n, np.int32)
    offsets = np.empty(n, np.int64)
    cdef int[::1] codes_view = topic_codes
    cdef int[::1] partitions_view = partitions
    cdef long long[::1] offsets_view = offsets
    cdef PyObject **values = <PyObject **>malloc(n * sizeof(PyObject *))
    if values == NULL:
        raise MemoryError()
    for i in range(n):
        values[i] = NULL
    try:
        for i in range(n):
            message = messages[i]
            topic = topic_of(message)
            if last is None or topic != last:
                if topic in topics:
                    code = topics.index(topic)
                else:
                    code = len(topics)
                    topics.append(topic)
                last = topic
            codes_view[i] = code
            partitions_view[i] = partition_of(message)
            offsets_view[i] = offset_of(message)
            if not one_line:
                continue
            value = value_of(message)
            if not PyBytes_Check(value):
                one_line = False
                continue
            size = PyBytes_GET_SIZE(value)
            data = PyBytes_AS_STRING(value)
            if size == 0 or data[0] != b'{' or memchr(data, b'\n', size) != NULL:
                one_line = False
                continue
            Py_INCREF(value)
            values[i] = <PyObject *>value
            total += size
        if not one_line:
            return None, topic_codes, partitions, offsets
        body = PyBytes_FromStringAndSize(NULL, total + n - 1)
        out = PyBytes_AS_STRING(body)
        for i in range(n):
            size = PyBytes_GET_SIZE(<object>values[i])
            memcpy(out, PyBytes_AS_STRING(<object>values[i]), size)
            out += size
            if i + 1 < n:
                out[0] = b'\n'
                out += 1
        return body, topic_codes, partitions, offsets
    finally:
        for i in range(n):
            if values[i] != NULL:
                Py_DECREF(<object>values[i])
        free(values)
