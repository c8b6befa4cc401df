"""A workload's data in an engine: seed it (`seeding.py`), and give every run a fresh copy (`fresh.py`).

The data sits between the engines and the service: `seed` bulk-loads a workload's generated
rows through an engine (`checksum` proves two engines hold the same rows), `FreshData` keeps a
snapshot so each run of a comparison starts from the data exactly as seeded. Progress goes out
through callbacks; nothing here prints.
"""
