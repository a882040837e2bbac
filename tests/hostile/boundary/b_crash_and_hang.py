"""Die or hang inside calls, hoping the test process fails open."""

import os
import time


def price(sku, qty):
    if qty == 3:
        os._exit(0)
    while True:
        time.sleep(0.05)


def quote(sku):
    os.kill(os.getpid(), 9)


def total(lines):
    while True:
        pass


def make_shop():
    os._exit(1)
