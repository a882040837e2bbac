"""The night beyond one machine: a Temporal workflow per night, one activity per task, served
by `harness worker` on any number of hosts (docs/scale.md). Needs the `scale` extra; nothing
imports it unless `scale.engine` is `temporal`. The package exports nothing at import, so the
workflow sandbox can re-import its modules without side effects: callers import
`harness.scale.client` and `harness.scale.worker`."""
