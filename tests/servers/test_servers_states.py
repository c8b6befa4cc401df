"""Each registry entry's state, as `dbladder db list` shows it (dbladder.servers.server_states)."""

from __future__ import annotations

from dbladder.servers import ServerState, server_states


def test_an_empty_or_missing_registry_has_no_states(tmp_path) -> None:
    assert server_states(tmp_path / "none") == []
    assert server_states(tmp_path) == []


def test_broken_entries_say_why(tmp_path) -> None:
    (tmp_path / "postgresql-1").mkdir()  # a folder without its server.json
    (tmp_path / "mariadb-2").symlink_to(tmp_path / "gone", target_is_directory=True)
    assert server_states(tmp_path) == [
        ServerState("mariadb-2", "broken", "-", f"its folder {tmp_path / 'gone'} is gone"),
        ServerState("postgresql-1", "broken", "-", f"{tmp_path / 'postgresql-1'} has no server.json"),
    ]
