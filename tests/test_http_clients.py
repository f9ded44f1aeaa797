"""harness/services/http_clients.py: the drivers' HTTP clients give an idle connection up before the apps'
servers do."""

from __future__ import annotations

from pathlib import Path

from harness.services.http_clients import KEEP_ALIVE, client

DRIVERS = Path(__file__).resolve().parent.parent / "harness" / "drivers"


def test_an_idle_connection_is_given_up_before_any_server_we_start_closes_it() -> None:
    # uvicorn (Letta, Open WebUI, Khoj, memchat's bench) closes after 5 s, gunicorn after 2 s.
    assert KEEP_ALIVE.keepalive_expiry is not None and KEEP_ALIVE.keepalive_expiry < 2
    with client(base_url="http://127.0.0.1:9") as http:
        assert http.base_url.host == "127.0.0.1"


def test_every_client_a_driver_makes_comes_from_client() -> None:
    direct = [f"{path.relative_to(DRIVERS.parent.parent)}:{number}"
              for path in sorted(DRIVERS.rglob("*.py"))
              for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if "httpx.Client(" in line]
    assert direct == [], f"make these with harness.services.http_clients.client() (the suite's keep-alive): {direct}"
