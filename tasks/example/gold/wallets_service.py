"""Wallets service: customer balances in integer cents (an already-ported nimbus service).

Ported from the legacy `wallets.py` module, which kept balances in a module-level dict,
printed its logs and returned (status, dict) tuples from `dispatch(action, payload)`.
"""

from __future__ import annotations

from typing import Any

from nimbus import Conflict, Invalid, NotFound, Service, handler

MAX_DEPOSIT_CENTS = 1_000_000  # one deposit: $10,000.00
MAX_BALANCE_CENTS = 5_000_000  # a wallet never holds more than $50,000.00
OPEN, CLOSED = "open", "closed"


def _key(wallet_id: str) -> str:
    return f"wallet:{wallet_id}"


def _require_amount(amount: object, limit: int) -> int:
    # bool is an int subclass; True cents is never a real amount.
    if not isinstance(amount, int) or isinstance(amount, bool):
        raise Invalid("amount must be an integer number of cents", field="amount")
    if not 0 < amount <= limit:
        raise Invalid(f"amount must be between 1 and {limit} cents", field="amount")
    return amount


class WalletsService(Service):
    """Open, fund, spend from and close wallets."""

    name = "wallets"

    @handler("wallets.open", status=201)
    def open(self, owner: str) -> dict[str, Any]:
        owner = owner.strip()
        if not owner:
            raise Invalid("owner is required", field="owner")
        wallet_id = f"wal-{self.store.incr('wallets:seq'):04d}"
        wallet = {
            "id": wallet_id,
            "owner": owner,
            "balance": 0,
            "status": OPEN,
            "opened_at": self.clock.now().isoformat(),
        }
        self.store.put(_key(wallet_id), wallet)
        self.bus.publish("wallet.opened", {"wallet_id": wallet_id, "owner": owner})
        self.log.info("wallet_opened", wallet_id=wallet_id)
        return wallet

    @handler("wallets.get")
    def get(self, wallet_id: str) -> dict[str, Any]:
        wallet = self.store.get(_key(wallet_id))
        if wallet is None:
            raise NotFound(f"no wallet {wallet_id}", field="wallet_id")
        return wallet

    @handler("wallets.deposit")
    def deposit(self, wallet_id: str, amount: int) -> dict[str, Any]:
        amount = _require_amount(amount, MAX_DEPOSIT_CENTS)
        wallet = self._open_wallet(wallet_id)
        if wallet["balance"] + amount > MAX_BALANCE_CENTS:
            raise Conflict("deposit would exceed the wallet limit", field="amount")
        wallet["balance"] += amount
        self.store.put(_key(wallet_id), wallet)  # the store holds a copy: write it back
        self.log.info("wallet_deposited", wallet_id=wallet_id, amount=amount)
        return wallet

    @handler("wallets.withdraw")
    def withdraw(self, wallet_id: str, amount: int) -> dict[str, Any]:
        amount = _require_amount(amount, MAX_BALANCE_CENTS)
        wallet = self._open_wallet(wallet_id)
        if amount > wallet["balance"]:
            raise Conflict("insufficient funds", field="amount")
        wallet["balance"] -= amount
        self.store.put(_key(wallet_id), wallet)
        self.log.info("wallet_withdrew", wallet_id=wallet_id, amount=amount)
        return wallet

    @handler("wallets.close")
    def close(self, wallet_id: str) -> dict[str, Any]:
        wallet = self._open_wallet(wallet_id)
        if wallet["balance"] != 0:
            raise Conflict("only an empty wallet can be closed")
        wallet["status"] = CLOSED
        self.store.put(_key(wallet_id), wallet)
        self.bus.publish("wallet.closed", {"wallet_id": wallet_id})
        self.log.info("wallet_closed", wallet_id=wallet_id)
        return wallet

    def _open_wallet(self, wallet_id: str) -> dict[str, Any]:
        wallet = self.get(wallet_id)
        if wallet["status"] != OPEN:
            raise Conflict(f"wallet {wallet_id} is {wallet['status']}")
        return wallet


def create_service(**deps: Any) -> WalletsService:
    """The service on the given resources (store=, bus=, clock=); missing ones are fresh."""
    return WalletsService(**deps)
