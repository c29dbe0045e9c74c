"""Reserving a new segment's disk space up front (``preallocate``), without changing its size.

Kafka's ``preallocate`` sizes a new ``.log`` file to ``segment.bytes`` and
trims it when the segment rolls. Here the blocks are reserved with Linux's
``fallocate(FALLOC_FL_KEEP_SIZE)`` instead: the file keeps the size of the
data in it, so readers, recovery and the log end offset see exactly what
was written, while the filesystem has already allocated (contiguous where
it can) the space the segment will grow into, and a full disk shows when
the segment is created rather than in the middle of an append. Truncating
the file to its size gives back what the segment did not use.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
from typing import Callable

FALLOC_FL_KEEP_SIZE = 0x01
# Filesystems or platforms that cannot reserve space: the segment then grows as written.
_UNSUPPORTED = {errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


@functools.lru_cache(maxsize=1)
def _fallocate() -> Callable[[int, int, int, int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    function = getattr(ctypes.CDLL(name, use_errno=True), "fallocate", None)
    if function is None:
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
    function.restype = ctypes.c_int
    return function


def reserve_space(fd: int, size: int) -> bool:
    """Reserve ``size`` bytes for the file open as ``fd``, keeping its size; False where unsupported.

    Raises ``OSError`` for any other failure (a full disk: ``ENOSPC``).
    """
    fallocate = _fallocate()
    if fallocate is None or size <= 0:
        return False
    if fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, size) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code))
