"""The planted candidates and their tiny task are data for tests/hostile/test_python.py."""

collect_ignore = ["task", "boundary", "capability"]
collect_ignore_glob = ["h_*.py"]
