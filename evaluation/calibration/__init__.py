"""Calibration of the local judge against the public benchmarks in `../shared/eval` (never read at run time)."""
