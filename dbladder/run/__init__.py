"""Running rounds: one round from fresh data to a saved result (`round.py`), several rounds compared
(`compare.py`), and what the machine and the service did meanwhile (`observation.py`, over
`dbladder.observe`).
"""
