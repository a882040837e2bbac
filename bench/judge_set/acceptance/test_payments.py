import pytest
from payments_port import balance, charge


def test_charge_records_the_amount():
    assert charge("A-1001", 42.5) == {"order_id": "A-1001", "charged": 42.5}


def test_charge_refuses_a_negative_amount():
    with pytest.raises(ValueError):
        charge("A-1001", -1)


def test_balance_sums_the_entries():
    charge("B-2002", 10)
    charge("B-2002", 15)
    assert balance("B-2002") == 25
