"""The task folders under tests/testrun are inputs of tests, not tests."""

collect_ignore = ["shapes"]
