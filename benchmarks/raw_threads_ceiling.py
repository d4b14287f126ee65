"""The ceiling of a thread-per-caller stdio client in CPython, with no MCP library at all.

A bare client: one reader thread, a dict of one-shot locks, callers writing under a write
lock, against ``servers/fast_server.py``.  It shows how many round trips per second threads
can carry on this machine before any protocol work: the threads binding is measured against
it in the closing notes (``python benchmarks/raw_threads_ceiling.py``).
"""

from __future__ import annotations

import _thread
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

SERVER = Path(__file__).parent / "servers" / "fast_server.py"


def main() -> None:
    proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    wfd, rfd = proc.stdin.fileno(), proc.stdout.fileno()
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}
    os.write(wfd, json.dumps(init).encode() + b"\n")
    os.read(rfd, 65536)
    waiters: dict[int, _thread.LockType] = {}
    lock = threading.Lock()
    wlock = threading.Lock()
    next_id = [1]

    def reader() -> None:
        buf = b""
        while True:
            data = os.read(rfd, 65536)
            if not data:
                return
            buf += data
            *lines, buf = buf.split(b"\n")
            for line in lines:
                rid = json.loads(line)["id"]
                with lock:
                    waiter = waiters.pop(rid)
                waiter.release()

    threading.Thread(target=reader, daemon=True).start()

    def call() -> None:
        waiter = _thread.allocate_lock()
        waiter.acquire()
        with lock:
            rid = next_id[0]
            next_id[0] += 1
            waiters[rid] = waiter
        msg = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "hello world"}}}
        data = json.dumps(msg).encode() + b"\n"
        with wlock:
            os.write(wfd, data)
        waiter.acquire()

    for _ in range(500):
        call()
    per = 20000 // 64

    def worker() -> None:
        for _ in range(per):
            call()

    threads = [threading.Thread(target=worker) for _ in range(64)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"raw threads, 64 in flight: {per * 64 / (time.perf_counter() - t0):,.0f} calls/s")
    t0 = time.perf_counter()
    for _ in range(5000):
        call()
    print(f"raw threads, sequential:   {5000 / (time.perf_counter() - t0):,.0f} calls/s")
    proc.stdin.close()
    proc.wait(5)


if __name__ == "__main__":
    main()
