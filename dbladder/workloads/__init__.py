"""Workloads: a web application's data and operations, pluggable.

A workload is a module with a schema, a deterministic data generator, the operations a request
can perform, and a checksum of its data. The shop of seeds 000 and 001 is the first; the
"chirp" social app (seed 003) and chatty ORM-style endpoints (seed 002) are meant to follow the
same shape.
"""
