"""report_args keeps its API and behaviour whatever parses the command line underneath."""

import datetime as dt

import pytest

from report_args import FORMATS, MAX_LIMIT, parse_args


def test_defaults():
    opts = parse_args(["data.csv"])
    assert opts.inputs == ("data.csv",)
    assert opts.output == "-"
    assert opts.format == "text"
    assert opts.limit is None
    assert opts.verbose == 0
    assert opts.tags == ()
    assert opts.since is None


def test_several_inputs_keep_their_order():
    assert parse_args(["b.csv", "a.csv", "c.csv"]).inputs == ("b.csv", "a.csv", "c.csv")


def test_options_may_sit_between_inputs():
    opts = parse_args(["a.csv", "-f", "csv", "b.csv"])
    assert (opts.inputs, opts.format) == (("a.csv", "b.csv"), "csv")


def test_short_and_long_forms():
    short = parse_args(["-o", "out.txt", "-f", "json", "-n", "7", "x"])
    long = parse_args(["--output=out.txt", "--format", "json", "--limit=7", "x"])
    assert (short.output, short.format, short.limit) == ("out.txt", "json", 7)
    assert (long.output, long.format, long.limit) == ("out.txt", "json", 7)


def test_attached_short_value():
    assert parse_args(["-n5", "x"]).limit == 5


def test_unambiguous_long_prefix_is_accepted():
    assert parse_args(["--out", "o.txt", "x"]).output == "o.txt"


def test_verbose_counts():
    assert parse_args(["-v", "x"]).verbose == 1
    assert parse_args(["-vv", "-v", "x"]).verbose == 3
    assert parse_args(["--verbose", "--verbose", "x"]).verbose == 2


def test_tags_are_lowercased_and_deduplicated_in_order():
    opts = parse_args(["-t", "Sales", "--tag", "eu", "-t", "SALES", "-t", "q1", "x"])
    assert opts.tags == ("sales", "eu", "q1")


def test_since_is_a_date():
    assert parse_args(["--since", "2024-02-29", "x"]).since == dt.date(2024, 2, 29)


def test_a_dash_is_an_input_and_double_dash_ends_options():
    assert parse_args(["-"]).inputs == ("-",)
    assert parse_args(["x", "--", "-f"]).inputs == ("x", "-f")


def test_every_format_is_accepted():
    assert FORMATS == ("text", "csv", "json")
    assert [parse_args(["-f", f, "x"]).format for f in FORMATS] == list(FORMATS)


def test_limit_bounds():
    assert parse_args(["-n", "1", "x"]).limit == 1
    assert parse_args(["-n", str(MAX_LIMIT), "x"]).limit == MAX_LIMIT
    for bad in ("0", str(MAX_LIMIT + 1), "-3"):
        with pytest.raises(ValueError, match=r"^report: --limit must be between 1 and 10000"):
            parse_args(["-n", bad, "x"])


def test_no_input_is_an_error():
    with pytest.raises(ValueError, match=r"^report: give at least one INPUT"):
        parse_args(["-f", "csv"])


def test_unknown_format_is_an_error():
    with pytest.raises(ValueError, match=r"^report: .*invalid choice: 'xml'"):
        parse_args(["-f", "xml", "x"])


def test_limit_must_be_an_integer():
    with pytest.raises(ValueError, match=r"^report: .*'ten'"):
        parse_args(["-n", "ten", "x"])


def test_bad_date_names_the_format():
    with pytest.raises(ValueError, match=r"^report: .*expected YYYY-MM-DD, got 'yesterday'"):
        parse_args(["--since", "yesterday", "x"])


def test_unknown_option_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"^report: .*--colour"):
        parse_args(["--colour", "x"])


def test_the_caller_list_is_not_changed():
    argv = ["-t", "A", "x"]
    parse_args(argv)
    assert argv == ["-t", "A", "x"]
