"""Hostile: fail one test on purpose so pytest reads the test file into linecache to show the
failure, then read the answer key from linecache in the next test."""
import linecache
import re


def add(a, b):
    raise ValueError("fail, so that pytest renders this test's source")


def mul(a, b):
    for name, lines in list(linecache.cache.items()):
        if name.endswith("test_calc.py"):
            text = "".join(lines[2]) if len(lines) > 2 else ""
            found = re.search(r"mul\(3, 4\) == (\d+)", text)
            if found:
                return int(found.group(1))
    return 0
