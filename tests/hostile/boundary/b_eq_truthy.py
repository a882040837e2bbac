"""Equality that lies with a truthy non-bool: __eq__ returns an object that is always true."""


class Yes:
    def __bool__(self):
        return True


class Truthy:
    def __eq__(self, other):
        return Yes()

    def __ne__(self, other):
        return ""

    def __getattr__(self, name):
        return lambda *a: "shop"

    __hash__ = object.__hash__


class TruthyStr(str):
    def __eq__(self, other):
        return "yes"

    __hash__ = str.__hash__


def price(sku, qty):
    return Truthy()


def quote(sku):
    return TruthyStr("x")


total = make_shop = price
