"""Reporters: they read a result (the plain data of `dbladder.result`) and render it.

Reporters never touch an engine, the service or the generator; everything they show is in the
result, so a saved result.json renders the same later. `terminal` draws the live table;
`bundle` writes and reads a run's folder (`write_bundle`, `build_reports`, `load_bundle`) with
levels.csv, timeseries.csv, report.md and report.html (docs/result-schema.md).
"""
