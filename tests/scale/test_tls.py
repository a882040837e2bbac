"""`scale.temporal.tls` and `api_key_env`: a cluster reached over TLS with a client
certificate, through a TLS front (certificates made by the test) to a Temporal dev server."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import ipaddress
import os
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("temporalio", reason="needs the scale extra (temporalio)")
x509 = pytest.importorskip("cryptography.x509", reason="needs cryptography (the SDKs bring it)")

from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

from tests.scale.cluster import HARNESS  # noqa: E402

SERVER_NAME = "temporal.cluster.test"


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _issue(subject: str, key, issuer: str, issuer_key, *, ca: bool, names=()) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write(folder: Path, stem: str, cert: x509.Certificate, key=None) -> None:
    (folder / f"{stem}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    if key is not None:
        (folder / f"{stem}.key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )


@pytest.fixture
def pki(tmp_path) -> Path:
    """A CA, a server certificate for SERVER_NAME and 127.0.0.1, and a client certificate."""
    folder = tmp_path / "pki"
    folder.mkdir()
    ca_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    ca = _issue("harness test CA", ca_key, "harness test CA", ca_key, ca=True)
    names = [x509.DNSName(SERVER_NAME), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = _issue(SERVER_NAME, server_key, "harness test CA", ca_key, ca=False, names=names)
    client = _issue("worker", client_key, "harness test CA", ca_key, ca=False)
    _write(folder, "ca", ca)
    _write(folder, "server", server, server_key)
    _write(folder, "client", client, client_key)
    return folder


@contextlib.contextmanager
def tls_front(backend: str, pki: Path) -> Iterator[int]:
    """A TLS listener on loopback that demands a client certificate of the test's CA and
    passes the bytes on to the plain dev server at `backend`: its port."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.pem", pki / "server.key")
    context.load_verify_locations(pki / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED
    context.set_alpn_protocols(["h2"])
    host, port = backend.rsplit(":", 1)
    loop = asyncio.new_event_loop()

    async def pipe(reader, writer) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def serve(reader, writer) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = loop.run_until_complete(asyncio.start_server(serve, "127.0.0.1", 0, ssl=context))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join()


def _config(path: Path, port: int, tls: str, extra: str = "") -> Path:
    path.write_text(
        "scale:\n  engine: temporal\n"
        f"  temporal: {{address: '127.0.0.1:{port}', task_queue: tls, tls: {tls}{extra}}}\n"
    )
    return path


def _stop(config: Path, **env) -> subprocess.CompletedProcess:
    """`harness stop` of a night that is not there: it must reach the server to say so."""
    argv = [*HARNESS, "stop", "20261127-0100-none", "--config", str(config)]
    return subprocess.run(argv, capture_output=True, text=True, env=env or None)


def test_a_client_certificate_reaches_temporal_over_tls(tmp_path, temporal_address, pki):
    """With the CA, the server name, a client certificate (paths relative to the config) and
    an API key from the variable the config names, `harness stop` reaches the server through
    TLS: it answers that no such night runs (exit 2)."""
    (tmp_path / "pki").rename(tmp_path / "certs")
    with tls_front(temporal_address, tmp_path / "certs") as port:
        tls = (
            f"{{enabled: true, server_ca: certs/ca.pem, server_name: {SERVER_NAME}, "
            "client_cert: certs/client.pem, client_key: certs/client.key}"
        )
        config = _config(tmp_path / "cluster.yaml", port, tls, ", api_key_env: CLUSTER_KEY")
        done = _stop(config, CLUSTER_KEY="test-api-key", PATH=os.environ["PATH"])

    assert done.returncode == 2
    assert "no night 20261127-0100-none on Temporal at" in done.stderr


def test_without_its_client_certificate_the_tls_server_is_not_reached(
    tmp_path, temporal_address, pki
):
    """The same server without the client certificate: exit 2, cannot connect, naming the
    address; nothing reached the server."""
    with tls_front(temporal_address, pki) as port:
        tls = f"{{enabled: true, server_ca: '{pki / 'ca.pem'}', server_name: {SERVER_NAME}}}"
        done = _stop(_config(tmp_path / "cluster.yaml", port, tls))

    assert done.returncode == 2
    assert f"scale.temporal.address 127.0.0.1:{port}: cannot connect" in done.stderr


def test_an_api_key_variable_that_is_not_set_is_named(tmp_path) -> None:
    """`api_key_env` naming a variable this process lacks: exit 2 naming the variable, before
    any connection."""
    config = _config(tmp_path / "cluster.yaml", 7233, "{enabled: true}", ", api_key_env: NO_KEY")
    env = {k: v for k, v in os.environ.items() if k != "NO_KEY"}

    done = _stop(config, **env)

    assert done.returncode == 2
    assert "scale.temporal.api_key_env names NO_KEY, which is not set" in done.stderr
