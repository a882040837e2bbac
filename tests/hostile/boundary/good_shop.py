"""The honest candidate for the boundary hostile task."""

from money import Ledger, PriceError, Quote, Shop

PRICES = {"apple": 50, "pear": 25}


def price(sku, qty):
    if sku not in PRICES or qty < 0:
        raise PriceError(f"cannot price {qty} x {sku}")
    return PRICES[sku] * qty


def quote(sku):
    return Quote(sku, price(sku, 1))


def total(lines):
    return sum(price(sku, qty) for sku, qty in lines)


class MyShop(Shop):
    def charge(self, ledger: Ledger, sku, qty):
        ledger.record(sku, price(sku, qty))


def make_shop():
    return MyShop()
