"""splitmix64: the hash the built-in workloads draw their data from.

A value is a function of (seed, stream, index) alone, so any chunk of rows can be made on its own
and every engine receives identical rows. Each workload numbers its own streams (one per column
or relation it draws). The arrays are hashed with numpy, whose uint64 arithmetic wraps, which is
what the hash wants; `hash_one` is the same for one index in plain Python. (declare.py's
RowRandom keeps a scalar finaliser of its own, so that a declared workload does not import numpy.)
"""

from __future__ import annotations

import numpy as np

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
STREAM_STEP = 0xD1B54A32D192ED03


def mix64(z: int) -> int:
    """splitmix64's finaliser: a well-spread 64-bit hash of z."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & MASK
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & MASK
    return z ^ (z >> 31)


def _offset(seed: int, stream: int) -> int:
    return (seed * GOLDEN + stream * STREAM_STEP) & MASK


def hash_array(seed: int, stream: int, index: np.ndarray) -> np.ndarray:
    """splitmix64 of each index, in a stream of its own per (seed, stream), as uint64."""
    z = index.astype(np.uint64) * np.uint64(GOLDEN) + np.uint64(_offset(seed, stream))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def below(seed: int, stream: int, index: np.ndarray, bound: int) -> np.ndarray:
    """A value from 0 to bound-1 per index, as int64."""
    return (hash_array(seed, stream, index) % np.uint64(bound)).astype(np.int64)


def hash_one(seed: int, stream: int, index: int) -> int:
    """`hash_array` of one index, for code that draws one value at a time."""
    return mix64((index * GOLDEN + _offset(seed, stream)) & MASK)
