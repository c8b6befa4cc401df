"""Workloads: a web application's data and operations, pluggable.

A workload is a module with a schema, a deterministic data generator, the operations a request
can perform, and a checksum of its data. The shop of seeds 000 and 001 is the first; the
"chirp" social app ("SQLite handled 315 million daily requests on a laptop") and chatty ORM-style endpoints
("PostgreSQL vs SQLite, 2026 edition") are meant to follow the
same shape.
"""
