"""The load generator: what to send, when, and how long it took.

Data flows one way. The schedule (`schedule.py`) says when each request is due: an open-model
ladder of levels, each a constant arrival rate held for a while, with due times computed from the
request's number so nothing drifts. The mix (`mix.py`) says what each request does, as a
reproducible stream of operations per generator process. Workers send each request at its due
time and time it from the due time as well as from the send; the recorder files each latency in
a mergeable histogram (`dbladder/histogram.py`) per level, so per-level figures are differences of
snapshots and processes can merge theirs. The recorder's histograms and counts become a plain,
serialisable result, which the reporters only read: they never touch an engine or the service.
"""
