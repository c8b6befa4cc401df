"""The load: what to send, when, and how long it took.

Data flows one way. A plan (`plans.py`) says when each request is due: an open-model ladder of
levels, each a constant arrival rate held for a while, with due times computed from the request's
number so nothing drifts; or closed-model phases of users who think between requests. The mix
(`mix.py`) says what each request does, as a reproducible stream of operations per process. An
executor (`executors/`: `open.py` for the ladder, `closed.py` for users, one skeleton) sends each
request at its due time, on a clock (`clock.py`), to a target (`targets/`: the service over
`http.py`, or an engine straight through `direct.py`), and times it from the due time as well as
from the send; the recorder (`recorder.py`) files each latency in a mergeable histogram
(`dbladder/histogram.py`) per level, so per-level figures are differences of snapshots and
processes can merge theirs. The fleet (`fleet.py`) runs one executor per process and merges their
snapshots. The merged snapshots become the result's level rows (`dbladder.result`), which the
reporters only read: they never touch an engine or the service.
"""
