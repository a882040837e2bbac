// Package bank keeps accounts that refuse overdrafts past their limit.
package bank

import (
	"errors"
	"fmt"
)

// ErrInsufficientFunds is returned when a withdrawal would pass the account's limit.
var ErrInsufficientFunds = errors.New("insufficient funds")

// Account is one owner's balance, in cents, and every movement on it.
type Account struct {
	owner   string
	limit   int
	balance int
	ledger  []int
}

// NewAccount opens an empty account that may go limit cents below zero.
func NewAccount(owner string, limit int) *Account {
	return &Account{owner: owner, limit: limit}
}

// Balance is the current balance in cents.
func (a *Account) Balance() int { return a.balance }

// Ledger lists every deposit (positive) and withdrawal (negative), oldest first.
func (a *Account) Ledger() []int { return append([]int(nil), a.ledger...) }

// Deposit adds cents to the account.
func (a *Account) Deposit(cents int) error {
	if cents <= 0 {
		return errors.New("deposit must be positive")
	}
	a.balance += cents
	a.ledger = append(a.ledger, cents)
	return nil
}

// Withdraw takes cents from the account, unless that would pass its limit.
func (a *Account) Withdraw(cents int) error {
	if cents <= 0 {
		return errors.New("withdrawal must be positive")
	}
	if a.balance-cents < -a.limit {
		return fmt.Errorf("%s cannot withdraw %d: %w", a.owner, cents, ErrInsufficientFunds)
	}
	a.balance -= cents
	a.ledger = append(a.ledger, -cents)
	return nil
}
