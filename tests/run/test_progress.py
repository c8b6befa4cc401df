"""What a run tells its caller (dbladder.run.progress): the quiet one takes everything and says nothing."""

from __future__ import annotations

from dbladder.load.live_view import LiveView
from dbladder.run.progress import Progress, QuietProgress


def test_quiet_progress_is_a_progress_that_ignores_everything(capsys) -> None:
    progress: Progress = QuietProgress()
    progress.message("seeding")
    progress.seeding("products", 10, {"products": 10})
    progress.live(LiveView(0, 10.0, 1.0, False, 10.0, 10.0, 1.0, 0))
    progress.level({"index": 0})
    assert capsys.readouterr() == ("", "")
