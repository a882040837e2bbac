"""Batch mode: attempt 1's writes go to the vendors' batch APIs at the start of the night,
are recorded, polled and settled, and each task joins the pool once its entry is settled.
Only the runner calls in, so its modules are imported by name: night (reserve, submit or
re-attach, poll, settle), start (which vendors, which tasks), report (read back for the summary)."""

__all__: list[str] = []
