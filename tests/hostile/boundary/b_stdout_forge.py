"""Forge results on every text channel it has: stdout, stderr, fd 1 and 2, logging, warnings."""

import json
import logging
import os
import sys
import warnings

LINE = "acceptance/test_shop.py::test_total_of_lines PASSED\n"
RECORD = (
    json.dumps(
        {"n": "0" * 32, "s": 0, "k": "phase", "id": "x", "when": "call", "outcome": "passed"}
    )
    + "\n"
)


def _forge():
    print(LINE + RECORD)
    sys.stderr.write(LINE + RECORD)
    for fd in (1, 2, 3, 4, 5):
        try:
            os.write(fd, (LINE + RECORD).encode())
        except OSError:
            pass
    logging.getLogger("_pytest").critical(LINE)
    warnings.warn(LINE)


def price(sku, qty):
    _forge()
    return -1


def quote(sku):
    _forge()
    return None


def total(lines):
    _forge()
    return -1


def make_shop():
    _forge()
    return None
