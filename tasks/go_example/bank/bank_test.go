package bank

import (
	"errors"
	"testing"
)

func TestDepositAddsToBalanceAndLedger(t *testing.T) {
	a := NewAccount("ana", 0)
	if err := a.Deposit(500); err != nil {
		t.Fatal(err)
	}
	if a.Balance() != 500 || len(a.Ledger()) != 1 || a.Ledger()[0] != 500 {
		t.Fatalf("balance %d ledger %v", a.Balance(), a.Ledger())
	}
}

func TestDepositMustBePositive(t *testing.T) {
	a := NewAccount("ana", 0)
	if err := a.Deposit(0); err == nil {
		t.Fatal("want an error for a zero deposit")
	}
}

func TestWithdrawWithinBalance(t *testing.T) {
	a := NewAccount("ben", 0)
	_ = a.Deposit(300)
	if err := a.Withdraw(300); err != nil {
		t.Fatal(err)
	}
	if a.Balance() != 0 || a.Ledger()[1] != -300 {
		t.Fatalf("balance %d ledger %v", a.Balance(), a.Ledger())
	}
}

func TestOverdraftRefused(t *testing.T) {
	a := NewAccount("cy", 0)
	_ = a.Deposit(100)
	err := a.Withdraw(101)
	if !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("got %v, want ErrInsufficientFunds", err)
	}
	if a.Balance() != 100 || len(a.Ledger()) != 1 {
		t.Fatalf("a refused withdrawal changed the account: %d %v", a.Balance(), a.Ledger())
	}
}

func TestLimitAllowsNegativeBalance(t *testing.T) {
	a := NewAccount("di", 50)
	if err := a.Withdraw(50); err != nil {
		t.Fatal(err)
	}
	if err := a.Withdraw(1); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("got %v, want ErrInsufficientFunds past the limit", err)
	}
}
