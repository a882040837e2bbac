"""Visible tests of a notes module: a folder and a mock are passed in. VISIBLE-KEY-7a1c"""

from unittest.mock import Mock

from notes import Shade, notify, score, shade, store

SCORES = [("apple", 5)]


def test_store_writes_into_the_folder(tmp_path):
    store(tmp_path, "n1")
    assert (tmp_path / "n1").read_text() == "n1"


def test_score():
    assert score("apple") == 5


def test_notify_sends_upper_case():
    sender = Mock()
    notify(sender, "a")
    sender.send.assert_called_once_with("A")


def test_shade():
    assert shade(1) is Shade.LIGHT
