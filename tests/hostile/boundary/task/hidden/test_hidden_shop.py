"""Hidden tests: other inputs for the same rules. HIDDEN-KEY-9c4e"""

import pytest

from money import PriceError
from shop import price, total

HIDDEN = [("apple", 7, 350), ("pear", 9, 225)]


@pytest.mark.parametrize(("sku", "qty", "want"), HIDDEN)
def test_hidden_price(sku, qty, want):
    assert price(sku, qty) == want


def test_hidden_total():
    assert total([("pear", 4)]) == 100


def test_hidden_negative_quantity():
    with pytest.raises(PriceError):
        price("apple", -1)
