"""The console script's process settings (``runtime``): checked in fresh interpreters, so this process keeps its own."""

from __future__ import annotations

import gc
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from postforget_lmeval.cli import main as cli, runtime

# mallinfo2().hblks counts the blocks malloc serves by mmap. By default a 1 MiB block is one (threshold 128 KiB;
# freeing it raises glibc's dynamic threshold to 1 MiB), and so is a 24 MiB block, unless runtime has set the
# threshold to 32 MiB
PROBE = """
import ctypes, gc, json, sys
from postforget_lmeval.cli import runtime

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

def mapped_blocks_for(size):
    before = libc.mallinfo2().hblks
    block = libc.malloc(size)
    grown = libc.mallinfo2().hblks - before
    libc.free(block)
    return grown

out = {"gc_before": gc.isenabled(), "mapped_before": mapped_blocks_for(1 << 20)}
out.update(runtime.for_one_run())
out.update({"gc_after": gc.isenabled(), "mapped_after": mapped_blocks_for(24 << 20)})
print(json.dumps(out))
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc tuning applies to glibc only")
def test_for_one_run_turns_the_collector_off_and_keeps_large_blocks_off_mmap() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout)
    assert got["gc_before"] and not got["gc_after"] and got["gc_disabled"]
    assert got["malloc_tuned"]
    assert got["mapped_before"] == 1  # glibc's default: a 1 MiB block is its own mapping
    assert got["mapped_after"] == 0  # 24 MiB, below the threshold set: from the heap, reused once freed


def test_the_console_script_applies_the_settings_before_the_command(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(runtime, "for_one_run", lambda: calls.append("settings") or {})
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(("main", argv)) or 3)
    try:
        assert cli.run(["a", "b"]) == 3
    finally:
        gc.unfreeze()  # cli.run froze this test process's objects
    assert calls == ["settings", ("main", ["a", "b"])]


BLAS_PROBE = """
import json, os, sys
from postforget_lmeval.cli import runtime

set_now = runtime.for_one_run()["blas_one_thread"]
import numpy  # OpenBLAS starts its threads here, from what was set above
threads = len(os.listdir("/proc/self/task"))
print(json.dumps({"set": set_now, "threads": threads, "again": runtime.for_one_run()["blas_one_thread"]}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2, reason="needs /proc and 2 CPUs")
def test_for_one_run_keeps_numpys_blas_to_one_thread() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    probe = subprocess.run([sys.executable, "-c", BLAS_PROBE], capture_output=True, text=True, check=True, env=env)
    got = json.loads(probe.stdout)
    assert got == {"set": True, "threads": 1, "again": False}  # numpy loaded: too late to change
    # what the setting prevents: OpenBLAS's own threads, one per further core
    bare = subprocess.run([sys.executable, "-c", "import os, numpy; print(len(os.listdir('/proc/self/task')))"],
                          capture_output=True, text=True, check=True, env=env)
    assert int(bare.stdout) > 1
    chosen = {**env, "OPENBLAS_NUM_THREADS": "2"}  # the user's choice is kept
    proc = subprocess.run([sys.executable, "-c", BLAS_PROBE], capture_output=True, text=True, check=True, env=chosen)
    kept = json.loads(proc.stdout)
    assert kept["set"] is False and kept["threads"] == 2
