"""Private machinery behind harness.testrun: scratch dirs, sandbox launch, recorder, checks."""
