"""Reporters: they read a result (the plain data of `dbladder.result`) and render it.

Reporters never touch an engine, the service or the generator; everything they show is in the
result, so a saved result.json renders the same later.
"""
