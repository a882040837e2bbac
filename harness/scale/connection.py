"""How this process reaches the cluster's Temporal service: TLS, an API key, and where the
SDK's own log lines go.

`scale.temporal.tls` names PEM files (the server's CA, this process's client certificate and
key) and the name the server's certificate carries; `scale.temporal.api_key_env` names the
environment variable that holds an API key (Temporal Cloud), which is read here and never
written anywhere. The SDK's core logs its retries (a server restarting) on stdout, where the
morning summary goes: they are forwarded to Python's logging (stderr) instead.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import Any

from temporalio.runtime import (
    LogForwardingConfig,
    LoggingConfig,
    Runtime,
    TelemetryConfig,
    TelemetryFilter,
)
from temporalio.service import TLSConfig

from harness.config import ScaleConfig
from harness.errors import BadInput

__all__ = ["connection_options"]


@functools.cache
def _runtime() -> Runtime:
    """One SDK runtime a process, its core's warnings on Python's logging, not stdout."""
    forward = LogForwardingConfig(logger=logging.getLogger("temporalio.core"))
    filters = TelemetryFilter(core_level="WARN", other_level="ERROR")
    return Runtime(telemetry=TelemetryConfig(logging=LoggingConfig(filters, forwarding=forward)))


def _read(path: Path | None, key: str) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BadInput(
            f"scale.temporal.tls.{key}: cannot read {path} ({exc.strerror}); fix the path in "
            "the config (every process reads it on its own machine)"
        ) from exc


def _tls(scale: ScaleConfig) -> TLSConfig | bool:
    tls = scale.temporal.tls
    if not tls.enabled:
        return bool(scale.temporal.api_key_env)  # an API key travels over TLS only
    return TLSConfig(
        server_root_ca_cert=_read(tls.server_ca, "server_ca"),
        domain=tls.server_name,
        client_cert=_read(tls.client_cert, "client_cert"),
        client_private_key=_read(tls.client_key, "client_key"),
    )


def _api_key(scale: ScaleConfig) -> str | None:
    name = scale.temporal.api_key_env
    if name is None:
        return None
    key = os.environ.get(name)
    if not key:
        raise BadInput(
            f"scale.temporal.api_key_env names {name}, which is not set in this process's "
            f"environment: export {name} (the API key), or set api_key_env to null"
        )
    return key


def connection_options(scale: ScaleConfig) -> dict[str, Any]:
    """`Client.connect`'s keyword arguments for the cluster in `scale`."""
    return {
        "namespace": scale.temporal.namespace,
        "tls": _tls(scale),
        "api_key": _api_key(scale),
        "runtime": _runtime(),
    }
