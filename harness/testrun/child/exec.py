"""Sandbox entry point for a foreign test command: lock the process down, then exec the command.

Runs inside the sandbox as `python -s -P -B exec.py` (launch.PYTHON_FLAGS) with its
configuration on stdin (never in argv or the environment). It reuses boot.py's lock-down steps
(cgroup, privilege drop, no new privileges, rlimits) and replaces itself with the operator's
command, so the command's exit status is the launch's. `{results}` in the command becomes
/dev/fd/N: the report pipe the harness reads, handed to the command and to nothing else the
harness starts.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path


def _boot():
    path = Path(__file__).with_name("boot.py")
    spec = importlib.util.spec_from_file_location("_harness_sandbox_boot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    boot = _boot()
    config = boot._read_config()
    for path in config.get("cgroups") or [config.get("cgroup")]:
        boot._join_cgroup(path)
    boot._drop_privileges(config.get("uid"))
    fd = config["fd"]
    boot._no_new_privileges(config.get("parent"))
    boot._set_limits(config["rlimits"])
    argv = [a.replace("{results}", f"/dev/fd/{fd}") for a in config["argv"]]
    if config.get("report"):
        os.set_inheritable(fd, True)
    else:
        os.close(fd)  # no report pipe for this runner: the candidate gets no channel to us
    os.chdir(config["cwd"])
    try:
        os.execvpe(argv[0], argv, dict(config["env"]))
    except OSError as exc:
        print(f"sandbox: cannot start {argv[0]!r}: {exc}", file=sys.stderr)
        os._exit(127)


if __name__ == "__main__":
    main()
