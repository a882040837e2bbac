"""The environment and limits of a foreign test command: toolchains reachable, caches private.

Built from an allowlist like pytest's (no key, token or proxy of the harness's environment gets
in). Every cache a toolchain writes (Go's build cache, GOPATH and module cache, npm's cache,
XDG caches) lives under the launch's own private home: a fresh folder per launch (bubblewrap's
private /tmp, or the fallback's per-run folder owned by the throwaway uid), never shared
between candidates, so one candidate cannot plant a poisoned build artefact for the next.
Dependencies come from the task's support files (a vendored Go module tree, a node_modules
folder), which sit read-only in the scratch tree like the tests; nothing is ever downloaded.
"""

from __future__ import annotations

from harness.testrun.launch import MARKER_VAR, base_env
from harness.testrun.limits import TestLimits

__all__ = ["FOREIGN_MIN_MEMORY_MB", "command_env", "command_rlimits"]

# RLIMIT_AS (address space, per process). Measured on amd64 with a three-test package and
# suite: go 1.19's `go test` (go, compile, link, the test binary) and node 20's `node --test`
# both fail at 512 MiB (Go's runtime arenas and V8's reserved heap and code range) and pass at
# 1 GiB. The default limit (2 GiB) leaves twice that; a lower configured limit is raised to
# this floor rather than making every foreign run crash in the toolchain.
FOREIGN_MIN_MEMORY_MB = 1024


def command_env(home: str, marker: str) -> tuple[tuple[str, str], ...]:
    """The command's whole environment, `home` being the launch's private writable folder."""
    return (
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        *base_env(home),
        ("XDG_CACHE_HOME", f"{home}/.cache"),
        ("XDG_CONFIG_HOME", f"{home}/.config"),
        # Go: caches private, modules only from the tree (no proxy, no checksum server, no
        # toolchain download), no workspace file from a parent folder, no cgo, no telemetry.
        ("GOCACHE", f"{home}/.cache/go-build"),
        ("GOPATH", f"{home}/go"),
        ("GOMODCACHE", f"{home}/go/pkg/mod"),
        ("GOFLAGS", "-mod=mod"),
        ("GOPROXY", "off"),
        ("GOSUMDB", "off"),
        ("GOTOOLCHAIN", "local"),
        ("GOWORK", "off"),
        ("GOENV", "off"),
        ("CGO_ENABLED", "0"),
        ("GOTELEMETRY", "off"),
        # node / npm: no update checks, no telemetry, a private cache.
        ("npm_config_cache", f"{home}/.npm"),
        ("npm_config_update_notifier", "false"),
        ("npm_config_offline", "true"),
        ("NODE_DISABLE_COLORS", "1"),
        # node reads OpenSSL's config at start-up; the sandbox has no /etc/ssl (and needs none).
        ("OPENSSL_CONF", "/dev/null"),
        (MARKER_VAR, marker),
    )


def command_rlimits(limits: TestLimits, nproc: int) -> dict[str, int]:
    """Per-process limits, as the pytest bootstrap sets them (soft = hard)."""
    return {
        "cpu": int(limits.cpu_s),
        "as": max(limits.memory_mb, FOREIGN_MIN_MEMORY_MB) << 20,
        "fsize": limits.file_size_mb << 20,
        "nproc": nproc,
        "core": 0,
    }
