"""The value boundary between the tests and the candidate (isolation: boundary).

Every module here is standard library only and is copied into both sandboxes as the package
`harness_boundary`: codec (values <-> JSON by exact type), wire (the request/reply endpoint,
handles and exception mirrors), candidate (the candidate process's main loop), proxy (the
module the tests import in place of the candidate), remote (the test side's generated classes
and functions) and script (a test's run of the candidate's file as a script). The harness
side, which starts candidate processes on request, is testrun/broker.py.
"""
