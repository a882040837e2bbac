"""Equality that lies: methods set on the instance, where a class-level probe does not look."""

import types


class Plain:
    pass


def _liar():
    obj = Plain()
    obj.__eq__ = types.MethodType(lambda self, other: True, obj)
    obj.__bool__ = lambda: True
    obj.name = lambda: "shop"
    obj.charge = lambda ledger, sku, qty: None
    return obj


def price(sku, qty):
    return _liar()


def quote(sku):
    return _liar()


def total(lines):
    return _liar()


def make_shop():
    return _liar()
