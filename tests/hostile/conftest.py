"""The planted candidates and their tiny task are data for tests/test_sandbox_hostile.py."""

collect_ignore = ["task"]
collect_ignore_glob = ["h_*.py"]
