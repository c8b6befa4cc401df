"""What dbladder sends to the Node Chirp app: its three pages over the seeded rows and new posts.

The reads are the pages of "SQLite handled 315 million daily requests on a laptop", each drawn
uniformly over the app's own rows (ids and handles read once per run after the setup): a post, a
profile and the timeline, the heavy page. One request in twenty is a new post, as the post's mixed
round had 5 % writes; the app answers it 201 with the new id in its JSON, which the integrity
check looks up in posts after the run. `--writes` changes the share of writes.
"""

from dbladder.app.requests import Acknowledge, Invariant, Param, Request, Requests

USER = Param.rows("SELECT id FROM users")

requests = Requests(
    requests=[
        Request("timeline", "GET", "/timeline/{user_id}", weight=55, params={"user_id": USER}),
        Request("post", "GET", "/post/{id}", weight=20, params={"id": Param.rows("SELECT id FROM posts")}),
        Request(
            "profile",
            "GET",
            "/u/{handle}",
            weight=20,
            params={"handle": Param.rows("SELECT handle FROM users")},
        ),
        Request(
            "new_post",
            "POST",
            "/post",
            weight=5,
            success=(201,),
            json={"user_id": "{user_id}", "body": "{body}"},
            params={"user_id": USER, "body": Param.text(2, 8)},
            acknowledge=Acknowledge.json("id"),
            find="SELECT count(*) FROM posts WHERE id = ?",
        ),
    ],
    invariants=[
        Invariant(
            "posts by no user",
            "SELECT p.id FROM posts p LEFT JOIN users u ON u.id = p.user_id WHERE u.id IS NULL",
        )
    ],
)
