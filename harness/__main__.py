"""Entry point for `python -m harness`."""

from harness.cli import main

raise SystemExit(main())
