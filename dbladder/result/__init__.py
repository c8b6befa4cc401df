"""The result of a run as plain, versioned data: what `result.json` and `compare.json` hold.

A level's row and the ceiling (`level_rows.py`), judged against the pass mark (`passmark.py`); the
spike's recovery from the per-second series (`spike.py`); the documents' JSON Schemas and their
check (`schema.py`, docs/result-schema.md); writing a document atomically (`files.py`).
Reporters only ever read this shape.
"""
