"""A workload's data in an engine: seed it (`seeding.py`), and give every run a fresh copy (`fresh.py`).

The data sits between the engines and the service: `seed_shop` bulk-loads the shop's generated rows
through an engine, `FreshData` keeps a snapshot so each run of a comparison starts from the data
exactly as seeded. Progress goes out through callbacks; nothing here prints.
"""
