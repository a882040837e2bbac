"""The candidate run as a script by a test (`subprocess.run([sys.executable, "mod.py", ...])`).

The stand-in at the candidate's place holds no code of the candidate's, so a process the tests
start on that file runs the stand-in's script branch (`run`): it hands its command line and its
standard streams (by SCM_RIGHTS) to the test process, over a Unix socket in the test
process's own /tmp that only processes of the tests' sandbox can reach. The test process
(`Scripts`) asks its candidate process to run the module as `__main__` with those streams
(the `main` request); the exit status comes back the same way. The candidate's process gets
the streams the tests gave their subprocess and nothing else of theirs: a pipe the tests read
is the script's output, as in plain Python. Standard library only (copied into the sandbox).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

ENV_LIB = "HARNESS_BOUNDARY_LIB"  # the folder holding this package, for the script branch
ENV_SOCKET = "HARNESS_BOUNDARY_SCRIPTS"  # the test process's socket for script runs
_MAX = 1 << 20


def run(file: str, argv: list[str]) -> int:
    """In a process the tests started on the stand-in: the candidate runs it; its status."""
    path = os.environ.get(ENV_SOCKET)
    if not path:
        print("the candidate cannot run as a script here (no test process)", file=sys.stderr)
        return 1
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        data = json.dumps({"file": os.path.abspath(file), "argv": argv}).encode()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        socket.send_fds(sock, [len(data).to_bytes(4, "big") + data], [0, 1, 2])
        reply = sock.recv(64)
    try:
        return int(reply.decode() or "1")
    except ValueError:
        return 1


class Scripts:
    """In the test process: accepts script runs and has the candidate process serve them."""

    def __init__(self, side: Any, folder: str) -> None:
        self.side = side
        self.path = str(Path(folder) / "scripts.sock")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o600)
        self.listener.listen(8)
        os.environ[ENV_SOCKET] = self.path
        os.environ[ENV_LIB] = str(Path(__file__).resolve().parent.parent)
        threading.Thread(target=self.serve, name="boundary-scripts", daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.one, args=(conn,), daemon=True).start()

    def one(self, conn: socket.socket) -> None:
        fds: list[int] = []
        status = 1
        try:
            data, fds, _, _ = socket.recv_fds(conn, _MAX + 4, 3)
            size = int.from_bytes(data[:4], "big")
            while len(data) < size + 4 and size <= _MAX:
                more = conn.recv(size + 4 - len(data))
                if not more:
                    break
                data += more
            request = json.loads(data[4 : size + 4])
            name = module_name(str(request["file"]))
            argv = [str(a) for a in request["argv"]]
            if name is None:
                raise LookupError(f"no module of the tests' path is {request['file']}")
            if len(fds) == 3:
                status = self.side.run_script(name, argv, fds)
        except Exception as exc:  # the script's own failure is its status; this is ours
            with contextlib.suppress(Exception):
                os.write(fds[2] if len(fds) == 3 else 2, f"boundary: {exc}\n".encode())
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            with contextlib.suppress(OSError):
                conn.sendall(str(status).encode())
            conn.close()


def module_name(file: str) -> str | None:
    """The module the tests import from `file` (the stand-in's path), by this process's path:
    the fullest dotted name whose parent folders are packages."""
    target = Path(file).resolve()
    found = []
    for entry in sys.path:
        base = Path(entry or ".").resolve()
        try:
            rel = target.relative_to(base)
        except ValueError:
            continue
        parts = list(rel.with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        packages = [base.joinpath(*parts[:n], "__init__.py") for n in range(1, len(parts))]
        if parts and all(p.isidentifier() for p in parts) and all(map(Path.exists, packages)):
            found.append(".".join(parts))
    return max(found, key=lambda n: n.count("."), default=None)
