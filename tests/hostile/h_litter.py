"""Hostile: leave files and folders behind in the host's shared folders (/tmp, /var/tmp, the
RAM-backed /dev/shm, /run/lock), where, without a private /tmp, they would outlive the run."""
import os

TAG = "harness-hostile-litter-" + "__LEAK_FILE__".replace("/", "_")[-80:]
for _folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
    try:
        os.makedirs(os.path.join(_folder, TAG, "deep"), exist_ok=True)
        with open(os.path.join(_folder, TAG, "deep", "blob"), "wb") as _fh:
            _fh.write(b"x" * (1 << 20))
        with open(os.path.join(_folder, TAG + ".file"), "wb") as _fh:
            _fh.write(b"x" * (1 << 20))
        os.symlink("/etc", os.path.join(_folder, TAG + ".link"))
    except OSError:
        pass


def add(a, b):
    return 0


def mul(a, b):
    return 0
