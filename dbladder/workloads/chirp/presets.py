"""Chirp's rounds: the HTTP rounds of "SQLite handled 315 million daily requests on a laptop".

The post measured each page alone and a mixed round, each with 50 connections sending as fast as
they could, on an Apple M1 (Node 22, better-sqlite3):

    post       GET /post/{id}            51,427 req/s
    profile    GET /u/{handle}           47,776 req/s
    timeline   GET /timeline/{user_id}    3,543 req/s
    mixed      95 % timelines, 5 % writes 3,654 req/s

dbladder climbs an open ladder instead (a rate held, then a higher one, until a level fails the
pass mark), so its figure is the highest rate served within the pass mark, not the throughput of
50 connections flat out; the two meet when the latency at saturation is within the pass mark.
Each ladder climbs in 20 s levels (5 s of them warm-up) to just past the post's figure, so a
machine as fast as the post's M1 reaches a ceiling within it; the mix is given by weights, the
workload's own weights being the mixed round's.
"""

from __future__ import annotations

from ...plans import Ladder, Preset
from .endpoints import MIXED

POST = "SQLite handled 315 million daily requests on a laptop"
M1 = "on an Apple M1 with 50 connections"
HOLD_S = 20.0
WARMUP_S = 5.0

PRESETS = {
    preset.name: preset
    for preset in (
        Preset(
            "post",
            f"{POST}: GET /post/{{id}} alone",
            ladder=Ladder(2500, 2500, 24, HOLD_S, WARMUP_S),
            weights=(("post_by_id", 1.0),),
            reference=f"51,427 req/s {M1}",
        ),
        Preset(
            "profile",
            f"{POST}: GET /u/{{handle}} alone",
            ladder=Ladder(2500, 2500, 24, HOLD_S, WARMUP_S),
            weights=(("profile", 1.0),),
            reference=f"47,776 req/s {M1}",
        ),
        Preset(
            "timeline",
            f"{POST}: GET /timeline/{{user_id}} alone",
            ladder=Ladder(250, 250, 16, HOLD_S, WARMUP_S),
            weights=(("timeline", 1.0),),
            reference=f"3,543 req/s {M1}",
        ),
        Preset(
            "mixed",
            f"{POST}: 95 % timelines, 5 % writes (3 % likes, 1.5 % posts, 0.5 % follows)",
            ladder=Ladder(250, 250, 16, HOLD_S, WARMUP_S),
            weights=tuple(MIXED.items()),
            reference=f"3,654 req/s {M1}",
        ),
    )
}
