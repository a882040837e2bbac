"""Legacy payments service on the old platform's SDK."""

import legacy_sdk


def charge(order_id, amount):
    if amount <= 0:
        return (400, "amount must be positive")
    legacy_sdk.ledger.post(order_id, amount)
    return (200, {"order_id": order_id, "charged": amount})


def refund(order_id, amount):
    legacy_sdk.ledger.post(order_id, -amount)
    return (200, {"order_id": order_id, "refunded": amount})


def balance(order_id):
    return (200, sum(legacy_sdk.ledger.entries(order_id)))
