"""What dbladder sends to the example app: logged-in sessions, the list page with its dozens of
queries, an asset's page, and incidents posted through a Django form with its CSRF token."""

from dbladder.app.requests import Acknowledge, Csrf, Invariant, Login, Param, Request, Requests

ASSET = Param.rows("SELECT id FROM tracker_asset")

requests = Requests(
    login=Login(
        "/accounts/login/",
        form={"username": "user{session}", "password": "pw"},
        csrf=Csrf.cookie("csrftoken", field="csrfmiddlewaretoken"),
        success=(302,),
    ),
    sessions=8,
    requests=[
        Request("assets", "GET", "/assets/", weight=60),
        Request("asset", "GET", "/assets/{id}/", weight=30, params={"id": ASSET}),
        Request(
            "report",
            "POST",
            "/incidents/new/",
            weight=10,
            success=(302,),
            form={"asset": "{id}", "title": "{title}"},
            params={"id": ASSET, "title": Param.text(2, 5)},
            acknowledge=Acknowledge.location(r"/incidents/(\d+)/"),
            find="SELECT count(*) FROM tracker_incident WHERE id = ?",
        ),
    ],
    invariants=[
        Invariant(
            "incidents of no asset",
            "SELECT i.id FROM tracker_incident i LEFT JOIN tracker_asset a ON a.id = i.asset_id "
            "WHERE a.id IS NULL",
        )
    ],
)
