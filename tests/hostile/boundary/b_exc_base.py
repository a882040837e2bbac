"""BaseException-only raises: exit, interrupt and pytest's own outcomes, to stop or skip a test."""

import sys

import pytest


def price(sku, qty):
    pytest.skip("nothing to see")


def quote(sku):
    sys.exit(0)


def total(lines):
    raise KeyboardInterrupt


def make_shop():
    pytest.xfail("expected")
