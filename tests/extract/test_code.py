"""Tests for harness.extract: reply → code, placeholders, required names."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.extract import NO_CODE, Extraction, extract_code, required_names_from_tests

MODULE = textwrap.dedent(
    """\
    from __future__ import annotations

    LIMIT = 3


    def create_order(items):
        if len(items) > LIMIT:
            raise ValueError("too many")
        return {"items": items, "status": "pending"}


    def cancel(order):
        order["status"] = "cancelled"
        return order
    """
)


def fenced(code: str, lang: str = "python") -> str:
    return f"```{lang}\n{code}```"


def with_body(body: str) -> str:
    """MODULE with cancel's body replaced by `body` (indented)."""
    head = MODULE.split("def cancel")[0]
    return head + "def cancel(order):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def test_fenced_block_with_prose_around_it():
    """A ```python block between prose lines yields exactly the block's code."""
    reply = f"Here is the module.\n\n{fenced(MODULE)}\n\nLet me know if anything fails."

    assert extract_code(reply) == Extraction(MODULE, None)


@pytest.mark.parametrize("lang", ["py", "", "Python", "python3"])
def test_fence_language_variants(lang):
    """```py, a bare ``` and other python spellings are accepted as python blocks."""
    assert extract_code(fenced(MODULE, lang)).code == MODULE


def test_non_python_fence_is_not_code():
    """A reply whose only block is ```bash has no python code."""
    assert extract_code("Run this:\n```bash\nls -la\n```") == Extraction(None, NO_CODE)


def test_raw_code_reply():
    """A reply that is entirely code is taken as it is."""
    assert extract_code(MODULE).code == MODULE.strip("\n")


def test_prose_line_before_raw_code_is_dropped():
    """`Here is the code:` followed by unfenced code yields the code."""
    result = extract_code("Here is the ported module:\n\n" + MODULE)

    assert result.code is not None and result.code.startswith("from __future__")


@pytest.mark.parametrize("reply", ["CLEAN", "", "   \n", "I cannot help with that.", "x"])
def test_replies_without_code(reply):
    """Prose, blank replies and a bare word are not a module."""
    assert extract_code(reply) == Extraction(None, NO_CODE)


def test_largest_parsing_block_wins():
    """Of several blocks the complete module wins over a usage snippet and a broken block."""
    snippet, broken = fenced("order = cancel(order)\n"), fenced("def cancel(:\n    pass\n" * 20)
    usage = fenced("print(create_order([]))\n")
    reply = f"Change:\n{snippet}\nDraft:\n{broken}\nFile:\n{fenced(MODULE)}\nUsage:\n{usage}"

    assert extract_code(reply).code == MODULE


def test_block_defining_required_names_wins_over_a_larger_one():
    """A larger helper block loses to the block that defines the names the tests import."""
    helpers = "def helper_%d():\n    return %d\n\n"
    big = "".join(helpers % (i, i) for i in range(30))
    reply = f"{fenced(MODULE)}\nAnd some helpers:\n{fenced(big)}"

    assert extract_code(reply, {"create_order", "cancel"}).code == MODULE


def test_syntax_error_reports_line():
    """A block that does not parse is rejected with the line of the error."""
    code = MODULE.replace("def cancel(order):", "def cancel(order)")

    result = extract_code(fenced(code))

    assert result.code is None
    assert result.reason is not None and result.reason.startswith("syntax error at line 12:")


def test_unclosed_fence_still_yields_its_text():
    """A reply cut off inside its fence is judged on the text it has."""
    cut = MODULE[: MODULE.index("    order[")]

    reason = extract_code(f"Here:\n```python\n{cut}").reason

    assert reason is not None and reason.startswith("syntax error at line 12: expected an indented")


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("# ... rest unchanged\n...\n", "# ... rest unchanged"),
        ("# existing code here\nreturn order\n", "# existing code here"),
        ("# ... (same as before)\nreturn order\n", "# ... (same as before)"),
        ("pass  # TODO implement\n", "pass  # TODO implement"),
        ('"""Cancel."""\n# TODO: implement\npass\n', "# TODO: implement"),
        ("# rest of the module is unchanged\nreturn order\n", "# rest of the module is unchanged"),
        ("order['status'] = 'x'\n# ... other methods\n", "# ... other methods"),
        ("# (code omitted for brevity)\nreturn order\n", "# (code omitted for brevity)"),
        ("order['status'] = 'cancelled'\n...\nreturn order\n", "..."),
    ],
)
def test_placeholders_are_rejected(body, shown):
    """Each placeholder style is rejected, naming its line and text."""
    line = 13 + body.splitlines().index(shown)  # cancel's body starts on line 13

    result = extract_code(fenced(with_body(body)))

    assert result.reason == f"placeholder at line {line}: {shown!r}"


def test_ellipsis_body_of_a_plain_function_is_a_placeholder():
    """A regular function whose whole body is `...` stands for omitted code."""
    result = extract_code(fenced(with_body('"""Cancel an order."""\n...\n')))

    assert result.reason == "placeholder at line 14: '...' (body of cancel)"


@pytest.mark.parametrize(
    "code",
    [
        "from typing import Protocol\nclass Store(Protocol):\n    def get(self) -> str: ...\n",
        "import typing\nclass Store(typing.Protocol[int]):\n    def get(self):\n        ...\n",
        "from abc import ABC\n\nclass Base(ABC):\n    def run(self):\n        ...\n",
        "import abc\n\nclass B:\n    @abc.abstractmethod\n    def run(self): ...\n",
        "@overload\ndef f(x: int) -> int: ...\ndef f(x):\n    return x\n",
        "if TYPE_CHECKING:\n    def hint() -> int: ...\n",
        "class Missing(Exception): ...\n",
        "x = np.zeros((2, 2))[..., 0]\nSENTINEL = ...\nHandler = Callable[..., int]\n",
        "def f(cb=...):\n    return cb\n",
        "def retry():\n    # TODO: implement backoff with jitter\n    return 1\n",
        "def noop():\n    pass\n",
        "# Other helpers\n# REST client stays the same\n# existing orders are kept\nX = 1\n",
        "def f():\n    text = '# ... rest unchanged'\n    return text\n",
        "try:\n    import json\nexcept ImportError:\n    ...\n",
    ],
)
def test_legitimate_ellipses_and_comments_pass(code):
    """Protocol/ABC/overload stubs, ellipsis literals, TODO notes in real code and section
    comments are not placeholders."""
    assert extract_code(fenced(code)) == Extraction(code, None)


DATAROWS = textwrap.dedent(
    """\
    def table():
        rows = [
            ("a", 1),
            #     ... (more datarows) ...
        ]
        return rows
    """
)


def test_a_comment_the_reference_has_is_never_a_placeholder():
    """`#     ... (more datarows) ...` kept from the reference is the port's own text."""
    result = extract_code(
        fenced(DATAROWS), reference="ROWS = [\n    #     ... (more datarows) ...\n]"
    )

    assert result == Extraction(DATAROWS, None)


def test_the_same_comment_without_the_reference_is_a_placeholder():
    """Without the reference saying it, the same comment stands for code left out."""
    result = extract_code(fenced(DATAROWS), reference="ROWS = [('a', 1)]\n")

    assert result.reason == "placeholder at line 4: '#     ... (more datarows) ...'"


def test_a_reference_in_another_language_excuses_its_comment_text():
    """A Go reference's `// ... rest unchanged` comment excuses the same words after `#`."""
    code = "def f(order):\n    # ... rest unchanged\n    return order\n"

    result = extract_code(fenced(code), reference="func F() {\n\t// ... rest unchanged\n}\n")

    assert result == Extraction(code, None)


def test_a_bare_ellipsis_in_the_reference_excuses_nothing():
    """A reference with `...` lines (Protocol stubs) does not excuse a stray `...` in code."""
    code = "def f(order):\n    order.pop()\n    ...\n    return order\n"

    result = extract_code(
        fenced(code), reference="class P(Protocol):\n    def f(self):\n        ...\n"
    )

    assert result.reason == "placeholder at line 3: '...'"


def test_missing_required_names_are_listed():
    """Code lacking names the tests import is rejected, naming them sorted."""
    result = extract_code(fenced(MODULE), ["create_order", "refund", "cancel", "Order"])

    assert result.reason == "missing names the tests import: Order, refund"


def test_module_level_definitions_of_every_kind_count():
    """Names bound by def, class, assignment, unpacking, import, try/except, `global`,
    walrus, for and with count as module-level."""
    code = textwrap.dedent(
        """\
        import os.path
        from json import loads as parse
        try:
            import tomllib
        except ImportError as exc:
            tomllib = None
        A, (B, *C) = 1, (2, 3)
        D: int = 4
        class E:
            pass
        async def f():
            pass
        def setup():
            global G
            G = 1
        if (H := 5):
            I = 6
        for J in range(2):
            pass
        with open(__file__) as K:
            pass
        """
    )
    required = {"os", "parse", "tomllib", *"ABCDE", "f", *"GHIJK"}

    assert extract_code(code, required).ok


def test_star_import_may_provide_anything():
    """A star import (or module __getattr__) cannot be checked, so nothing is missing."""
    assert extract_code("from legacy import *\n", ["anything"]).ok
    assert extract_code("def __getattr__(name):\n    return name\n", ["anything"]).ok


def test_names_inside_functions_do_not_count():
    """A name bound only inside a function is not a module-level name."""
    code = "def make():\n    create_order = 1\n    return create_order\n"

    assert extract_code(code, ["create_order"]).reason == (
        "missing names the tests import: create_order"
    )


TEST_SOURCE = textwrap.dedent(
    """\
    import importlib
    import orders_service
    import orders_service as svc
    import out.orders_service
    from orders_service import create_order, cancel as cancel_order
    from out.orders_service import refund
    from out import orders_service as aliased
    from billing import create_invoice
    from orders_service_extra import nope

    mod = importlib.import_module("orders_service")

    def test_things(monkeypatch):
        orders_service.LIMIT
        svc.Order(1)
        out.orders_service.ship()
        aliased.track
        mod.restock()
        getattr(svc, "audit")
        getattr(svc, "optional", None)
        monkeypatch.setattr(svc, "clock", lambda: 0)
        monkeypatch.setattr(svc, "maybe", 1, raising=False)
        orders_service.injected = 1
        orders_service.__file__
        create_invoice.total
    """
)


def test_required_names_from_every_import_style():
    """from-imports, attribute uses on module aliases, dotted paths and lookups are found."""
    names = required_names_from_tests([TEST_SOURCE], "orders_service")

    assert names == {
        "create_order", "cancel", "refund", "LIMIT", "Order", "ship", "track", "restock",
        "audit", "clock",
    }  # fmt: skip


def test_required_names_skip_unparseable_sources():
    """A test file that does not parse contributes nothing and raises nothing."""
    sources = ["def test(:\n", "from orders_service import a\n", "\x00"]

    assert required_names_from_tests(sources, "orders_service") == {"a"}


def test_required_names_ignore_other_modules():
    """Imports from other modules (even with a shared prefix) are not required names."""
    source = "from orders import a\nfrom my_orders_service import b\nimport orders\norders.c\n"

    assert required_names_from_tests([source], "orders_service") == frozenset()


_FRAGMENTS = st.sampled_from(
    [
        "```python\n", "```\n", "```py\n", "~~~\n", "```bash\n", "def f():\n", "    ...\n",
        "    return 1\n", "# ... rest unchanged\n", "pass  # TODO\n", "class A(Protocol):\n",
        "'''", '"""', "(", ")", "\\\n", "@overload\n", "from m import *\n", "\x00", "\t", "é",
        "if x:\n", "else:\n", "global g\n", "lambda: (yield)\n", "[" * 50, "x = 1\n",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_extract_never_raises_on_any_text(reply):
    """Arbitrary text gives an Extraction, with code or with a reason."""
    result = extract_code(reply, ["f"])

    assert (result.code is None) != (result.reason is None)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=5)), max_size=40))
def test_extract_never_raises_on_code_like_text(parts):
    """Fence and code fragments in any order give an Extraction, never an exception."""
    result = extract_code("".join(parts), ["f", "A"])

    assert (result.code is None) != (result.reason is None)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=5)), max_size=40))
def test_required_names_never_raise(parts):
    """Any test source gives a set of names, never an exception."""
    assert isinstance(required_names_from_tests(["".join(parts)], "m"), frozenset)


def test_required_names_follow_each_test_files_text() -> None:
    """The names asked of the module come from the texts given, also when the same text was
    read before beside another one."""
    a = "from calc import add\n"
    b = "import calc\n\ndef test_x():\n    assert calc.mul(2, 3) == 6\n"

    first = required_names_from_tests([a], "calc")
    both = required_names_from_tests([a, b], "calc")

    assert (first, both) == ({"add"}, {"add", "mul"})
