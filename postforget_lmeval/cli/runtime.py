"""Process-wide settings of the ``postforget-pair`` console script, which runs one command and exits.

Two defaults meant for long-lived processes cost a large pairing CPU on its critical path (measured on
the 2.1 GB pair of ``make bench``, 2 cores, 10 runs each):

* the cyclic garbage collector ran ~230 collections (0.11 s) over the growing tables to find a few
  MB of reference cycles;
* glibc's malloc hands freed memory back to the system and serves large numpy temporaries with
  fresh mappings, so the same pages are unmapped and faulted in again and again. Keeping freed
  memory for reuse took the whole process from 3.08 to 2.79 CPU-seconds (system time 0.73 -> 0.55 s).

Peak memory grew by about 7 MB (224 -> 231 MB). A third default costs CPU the reading processes need:

* numpy's OpenBLAS starts a thread per core when numpy is imported, and that thread spins for a
  while, competing with the reading processes. Nothing here multiplies matrices, so one BLAS thread
  is enough: the main process took 0.22 instead of 0.34 CPU-seconds to start and read the bench
  pair (3 runs each), the whole process 2.68 instead of 2.89 and 2.39 instead of 2.46 (two
  alternations of 8 and 10 runs, median CPU).

The settings apply only to that script's process (and the reading and analysis processes it forks);
``pair()`` called from a library leaves its caller's process as it is.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

# mallopt(3) parameters (malloc.h) and their values: keep up to 1 GiB of freed heap instead of
# trimming it, grow the heap 64 MiB at a time, and serve blocks below 32 MiB (glibc's maximum
# threshold on 64-bit systems) from the heap, where freed memory is reused, rather than by mmap
MALLOC_SETTINGS = {-1: 1 << 30, -2: 64 << 20, -3: 32 << 20}  # M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD


BLAS_THREADS = "OPENBLAS_NUM_THREADS"
"""Read by OpenBLAS (numpy's BLAS) once, when numpy is first imported."""


def for_one_run() -> dict[str, bool]:
    """Turn the cyclic garbage collector off, tune glibc's malloc (Linux with glibc only) and keep numpy's
    BLAS to one thread; says what was set."""
    gc.disable()
    return {"gc_disabled": True, "malloc_tuned": _tune_malloc(), "blas_one_thread": _one_blas_thread()}


def _one_blas_thread() -> bool:
    """One OpenBLAS thread unless the user chose a number; False when numpy is already loaded (too late)."""
    if "numpy" in sys.modules:
        return False
    return os.environ.setdefault(BLAS_THREADS, "1") == "1"


def _tune_malloc() -> bool:
    """mallopt with :data:`MALLOC_SETTINGS`; False where the C library has no such call or refuses a value."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all([mallopt(param, value) == 1 for param, value in MALLOC_SETTINGS.items()])
