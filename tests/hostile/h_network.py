"""Hostile: phone home over the network at import and from a test."""
import socket


def _call_home(message):
    try:
        with socket.create_connection(("127.0.0.1", __PORT__), timeout=1) as conn:
            conn.sendall(message)
            return conn.recv(100)
    except OSError:
        return b""


_call_home(b"import")


def add(a, b):
    return _call_home(b"test")


def mul(a, b):
    return 0
