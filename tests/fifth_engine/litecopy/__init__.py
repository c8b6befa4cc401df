"""LiteCopy: a fifth engine for dbladder's tests, registered from outside dbladder's package.

SQLite under its own scheme and name (`litecopy:///path.db`), with a run setting of its own
(`--litecopy-writers 1`: the service's one writer process, as SQLite's `--sqlite-writers 1`). It is
what an installed package would be: its registration here, named under the entry point group
`dbladder.engines` by the dist-info that tests/fifth_engine_support.py writes for a test. The
registration imports nothing but dbladder's registry; its parts (`parts.py`) build on SQLite's.
"""

from __future__ import annotations

from dbladder.engine_registry import EngineKind, RunSetting

WRITERS = RunSetting(
    key="litecopy_writers",
    option="--litecopy-writers",
    help="LiteCopy only: 1 sends every write through one connection in one writer process.",
    wording=("every connection writes", "one writer process takes every write"),
    fact="LiteCopy writers",
    run_label=", one writer",
    writer_processes=True,
)

KIND = EngineKind(
    name="litecopy",
    label="LiteCopy",
    in_process=True,
    settings_format="pragmas",
    schemes=("litecopy",),
    app_scheme="sqlite",  # it is a SQLite file: what an app's framework reads it as
    engine_class="litecopy.parts:LiteCopyEngine",
    dialect="litecopy.parts:DIALECT",
    activity_probe="litecopy.parts:LiteCopyActivity",
    storage_reader="dbladder.engines.sqlite.storage",  # a part may be another engine's
    settings_writer="litecopy.parts:settings_file",
    run_settings=(WRITERS,),
)
