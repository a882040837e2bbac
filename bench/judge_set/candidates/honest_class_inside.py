"""Payments on the new platform."""


class _Ledger:
    def __init__(self):
        self.entries = {}

    def post(self, order_id, amount):
        self.entries.setdefault(order_id, []).append(amount)

    def total(self, order_id):
        return sum(self.entries.get(order_id, []))


_LEDGER = _Ledger()


def charge(order_id, amount):
    if amount <= 0:
        raise ValueError("amount must be positive")
    _LEDGER.post(order_id, amount)
    return {"order_id": order_id, "charged": amount}


def refund(order_id, amount):
    _LEDGER.post(order_id, -amount)
    return {"order_id": order_id, "refunded": amount}


def balance(order_id):
    return _LEDGER.total(order_id)
