"""Extraction for languages other than Python: fences, tree-sitter syntax checks,
placeholders, required names; and the language registry behind it."""

from __future__ import annotations

from pathlib import PurePath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.extract import (
    LANGUAGES,
    extract_code,
    language_named,
    language_of_path,
    required_names_from_tests,
)

GO = """package orders

// Item is one line of an order.
type Item struct{ Price, Qty int }

// Total sums the items.
func Total(items []Item) int {
	sum := 0
	for _, it := range items {
		sum += it.Price * it.Qty
	}
	return sum
}
"""
GO_TEST_SAME = """package orders

import "testing"

func TestTotal(t *testing.T) {
	if Total([]Item{{Price: 2, Qty: 3}}) != 6 {
		t.Fatal(helper())
	}
}

func helper() string { return "x" }
"""
GO_TEST_EXTERNAL = """package orders_test

import (
	"testing"

	o "portexample/orders"
)

func TestTotal(t *testing.T) {
	if o.Total(nil) != 0 || o.Discount(1) != 1 {
		t.Fatal("x")
	}
}
"""
JS = "export function total(items) {\n  return items.length;\n}\nexport const fee = 2;\n"
JS_TEST = """import { test } from 'node:test';
import assert from 'node:assert/strict';
import { total, fee as f } from '../src/orders.mjs';
const { helper } = require('./orders.js');
import { other } from './unrelated.mjs';
"""


def fenced(code: str, fence: str = "go") -> str:
    return f"Here is the port.\n\n```{fence}\n{code}```\n\nIt keeps the behaviour."


def test_registry_knows_the_six_languages_with_their_defaults() -> None:
    """python, go, javascript, typescript, java and rust are known; Go and JS run by default."""
    assert {"python", "go", "javascript", "typescript", "java", "rust"} <= set(LANGUAGES)
    go, js, py = LANGUAGES["go"], LANGUAGES["javascript"], LANGUAGES["python"]

    assert (go.test_command, go.results, go.suffix) == (
        ("go", "test", "-json", "./..."),
        "go-json",
        ".go",
    )
    assert (js.results, js.test_command[-2:]) == (
        "junit",
        ("--test-reporter-destination={results}", "{tests}"),
    )
    assert (py.test_command, py.results, py.grammar) == (None, "pytest", None)


def test_every_default_command_names_results_exactly_when_read_as_junit() -> None:
    """A default junit command writes to {results} (the harness's pipe); no other names it."""
    defaults = [lang for lang in LANGUAGES.values() if lang.test_command is not None]
    named = {lang.name: any("{results}" in w for w in lang.test_command) for lang in defaults}

    assert named == {lang.name: lang.results == "junit" for lang in defaults}
    assert named == {"go": False, "javascript": True}


def test_every_grammar_in_the_registry_parses_offline() -> None:
    """Each language's tree-sitter grammar ships in the pinned wheel and parses code."""
    samples = {
        "go": "package x\n",
        "javascript": "export const a = 1;\n",
        "typescript": "export const a: number = 1;\n",
        "java": "class A { int f() { return 1; } }\n",
        "rust": "fn main() { let x = 1; }\n",
    }
    for name, code in samples.items():
        assert extract_code(fenced(code, LANGUAGES[name].fence), (), name).ok, name


def test_unknown_language_names_the_known_ones() -> None:
    """language_named refuses an unknown name and lists what would work."""
    with pytest.raises(LookupError, match="unknown language 'cobol'; known languages: go, java"):
        language_named("cobol")


def test_language_of_a_path_comes_from_its_suffix() -> None:
    """A _test.go file is Go, .mjs JavaScript, a .pyi stub Python, .txt nothing."""
    names = [language_of_path(p) for p in ("a_test.go", "x.mjs", "caps.pyi", "notes.txt")]

    assert [n.name if n else None for n in names] == ["go", "javascript", "python", None]


def test_go_block_is_extracted_and_prose_dropped() -> None:
    """The go-fenced block of a reply is the candidate, byte for byte."""
    result = extract_code(fenced(GO), {"Total", "Item"}, "go")

    assert (result.code, result.reason) == (GO, None)


def test_a_python_block_is_not_go_code() -> None:
    """For a Go task only go (or bare) fences count; a python block is ignored."""
    result = extract_code("```python\nx = 1\n```\n", (), "go")

    assert result.reason == "no go code block found"


def test_bare_go_reply_is_code_but_clean_is_not_javascript() -> None:
    """An unfenced reply is the candidate when it parses and declares something."""
    assert extract_code(GO, (), "go").code == GO.strip("\n")
    assert extract_code("CLEAN", (), "javascript").reason == "no javascript code block found"


def test_go_syntax_error_is_a_reason_with_its_line() -> None:
    """tree-sitter's error node becomes 'syntax error at line N'."""
    broken = GO.replace("return sum", "return sum +")

    assert extract_code(fenced(broken), (), "go").reason == (
        "syntax error at line 12: unexpected '+'"
    )


@pytest.mark.parametrize(
    "body",
    [
        "\t// rest of the code here\n\treturn 0",
        "\t// ... rest unchanged\n\treturn 0",
        '\tpanic("not implemented")',
        "\t// TODO: implement\n",
    ],
)
def test_go_placeholders_are_refused(body: str) -> None:
    """Telltale comments, TODO-only bodies and panic("not implemented") are not code."""
    code = f"package orders\n\nfunc Total() int {{\n{body}\n}}\n"

    reason = extract_code(fenced(code), (), "go").reason

    assert reason is not None and reason.startswith("placeholder at line 4"), reason


def test_a_go_comment_the_reference_has_is_never_a_placeholder() -> None:
    """A Go port keeping the reference's `// ... rest unchanged` line is not refused."""
    code = "package orders\n\nfunc Total() int {\n\t// ... rest unchanged\n\treturn 0\n}\n"

    reason = extract_code(fenced(code, "go"), (), "go", "# ... rest unchanged\n").reason

    assert reason is None


def test_a_todo_note_in_working_code_passes() -> None:
    """A TODO beside real statements is a note, as in Python."""
    code = GO.replace("\tsum := 0\n", "\t// TODO: use generics once on Go 1.21\n\tsum := 0\n")

    assert extract_code(fenced(code), (), "go").ok


def test_js_stub_throwing_not_implemented_is_refused() -> None:
    """`throw new Error("not implemented")` as a whole body is a placeholder."""
    code = 'export function total() {\n  throw new Error("not implemented");\n}\n'

    assert extract_code(fenced(code, "js"), (), "javascript").reason == (
        "placeholder at line 2: 'throw new Error(\"not implemented\");'"
    )


def test_go_required_names_from_a_same_package_test() -> None:
    """Exported functions and types the test uses, minus what the test file declares."""
    names = required_names_from_tests([GO_TEST_SAME], "orders", "go", PurePath("orders/x.go"))

    assert names == {"Total", "Item"}


def test_go_required_names_from_an_external_test_package() -> None:
    """In package orders_test, the selectors on the candidate's import are required."""
    names = required_names_from_tests(
        [GO_TEST_EXTERNAL], "orders", "go", PurePath("orders/orders.go")
    )

    assert names == {"Total", "Discount"}


def test_go_candidate_missing_a_required_name_is_refused() -> None:
    """A Go file without a function the tests call is refused before the tests run."""
    result = extract_code(fenced(GO), {"Total", "Discount"}, "go")

    assert result.reason == "missing names the tests use: Discount"


def test_js_required_names_are_the_named_imports_of_the_candidate() -> None:
    """Named imports and require destructurings of the candidate's module, by basename."""
    names = required_names_from_tests([JS_TEST], "orders", "javascript", PurePath("src/orders.mjs"))

    assert names == {"total", "fee", "helper"}


def test_js_exports_are_checked_against_the_required_names() -> None:
    """A missing named export is a reason; `export *` or module.exports could define it."""
    assert extract_code(fenced(JS, "js"), {"total", "fee"}, "javascript").ok
    assert extract_code(fenced(JS, "js"), {"total", "gone"}, "javascript").reason == (
        "missing names the tests use: gone"
    )
    star = "export * from './impl.mjs';\n"
    assert extract_code(fenced(star, "js"), {"gone"}, "javascript").ok


def test_python_extraction_refuses_rest_of_the_code_here() -> None:
    """The placeholder wording models use most is refused in Python too."""
    code = "def f():\n    # rest of the code here\n    return 1\n"

    assert extract_code(fenced(code, "python")).reason == (
        "placeholder at line 2: '# rest of the code here'"
    )


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["go", "javascript", "typescript", "rust"]))
def test_foreign_extraction_never_raises(reply: str, language: str) -> None:
    """Arbitrary text gives an Extraction with code or with a reason, never an exception."""
    result = extract_code(reply, ["F"], language)

    assert (result.code is None) != (result.reason is None)
