"""A bank account that refuses overdrafts and keeps a ledger."""


class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner: str, limit: int = 0):
        self.owner = owner
        self.limit = limit  # how far below zero the balance may go, in cents
        self.balance = 0
        self.ledger: list[int] = []

    def deposit(self, cents: int) -> None:
        if cents <= 0:
            raise ValueError("deposit must be positive")
        self.balance += cents
        self.ledger.append(cents)

    def withdraw(self, cents: int) -> None:
        if cents <= 0:
            raise ValueError("withdrawal must be positive")
        if self.balance - cents < -self.limit:
            raise InsufficientFunds(f"{self.owner} cannot withdraw {cents}")
        self.balance -= cents
        self.ledger.append(-cents)
