"""The parity corpus: real libraries' own suites held to plain pytest (docs/parity.md)."""
