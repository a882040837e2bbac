"""Benchmarks: this harness against the published loop, side by side, on the simulator."""
