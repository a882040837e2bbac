"""The value boundary between the tests and the candidate (isolation: boundary).

Every module here is standard library only and is copied into both sandboxes as the package
`harness_boundary`: codec (values <-> JSON by exact type), wire (the request/reply endpoint,
handles and exception mirrors), candidate (the candidate process's main loop) and proxy (the
module the tests import in place of the candidate). The harness side, which starts candidate
processes on request, is testrun/broker.py.
"""
