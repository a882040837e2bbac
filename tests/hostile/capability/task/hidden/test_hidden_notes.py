"""Hidden tests: other inputs for the same rules. HIDDEN-KEY-3e9f"""

from unittest.mock import Mock

from notes import Shade, notify, score, shade

HIDDEN = [("pear", 4), ("kiwi", 4)]


def test_hidden_score():
    assert [score(w) for w, _ in HIDDEN] == [n for _, n in HIDDEN]


def test_hidden_notify():
    sender = Mock()
    notify(sender, "b")
    sender.send.assert_called_once_with("B")


def test_hidden_shade():
    assert shade(2) == Shade.DARK
