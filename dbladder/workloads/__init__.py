"""Workloads: a web application's data and operations, pluggable.

A workload is a module with a schema, a deterministic data generator, the operations a request
can perform, and a check of what must hold in its data. The built-in ones are the shop of
"Postgres vs SQLite under load" and "Postgres vs MariaDB on two dedicated CPUs", the "chirp" social
app of "SQLite handled 315 million daily requests on a laptop", and the chatty ORM-style endpoints
of "PostgreSQL vs SQLite, 2026 edition", all of the same shape.
"""
