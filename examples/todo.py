"""A to-do app as a dbladder workload: users and their to-do items.

Run the whole ladder on it against any of the three engines, with no other code:

    dbladder run --workload examples/todo.py --db sqlite:///todo.db
    dbladder run --workload examples/todo.py --db postgresql://postgres@127.0.0.1:5432/todo
    dbladder compare --workload examples/todo.py --db sqlite:///todo.db --db mariadb://root@127.0.0.1:3306/todo

Four requests: a to-do by id, a user's open to-dos with the user's name (a join), adding a to-do
(a transaction of two statements: the insert and the user's last-active time), and ticking one
off or back on (409 for a to-do that does not exist).
"""

from dbladder.workloads.declare import App, Column, Index, Param, Query, Sql, Table, Write

FIRST_DAY = 1_700_000_000  # unix seconds; to-do n was created n seconds later

workload = App(
    name="todo",
    description="a to-do app: users and their to-do items, a join and two write transactions",
    tables=[
        Table(
            "users",
            [Column("id", "bigint"), Column("name", "text", max_length=64), Column("last_active", "bigint")],
            primary_key=["id"],
        ),
        Table(
            "todos",
            [
                Column("id", "bigint", generated_id=True),
                Column("user_id", "bigint"),
                Column("title", "text", max_length=200),
                Column("done", "int"),
                Column("created_at", "bigint"),
            ],
            primary_key=["id"],
        ),
    ],
    indexes=[Index("todos_by_user", "todos", ("user_id", "done", "id"))],
    sizes={"users": 10_000, "todos": 200_000},
    rows={
        # n is the row number (1, 2, ...); r draws values that depend only on the seed, table and n.
        "users": lambda n, r: (n, r.text(1, 2), FIRST_DAY),
        "todos": lambda n, r: (n, r.id("users"), r.text(2, 6), r.below(2), FIRST_DAY + n),
    },
    operations=[
        Query(
            "todo",
            "GET /todos/{id}",
            "SELECT id, user_id, title, done, created_at FROM todos WHERE id = ?",
            params={"id": Param.row("todos")},
            weight=40,
            one=True,
        ),
        Query(
            "open_todos",
            "GET /users/{id}/todos",
            "SELECT t.id, t.title, t.created_at, u.name FROM todos t JOIN users u ON u.id = t.user_id "
            "WHERE t.user_id = ? AND t.done = 0 ORDER BY t.id DESC LIMIT 20",
            params={"id": Param.row("users")},
            weight=40,
        ),
        Write(
            "add_todo",
            "POST /users/{user_id}/todos",
            [
                Sql(
                    "INSERT INTO todos (user_id, title, done, created_at) VALUES (?, ?, 0, ?) RETURNING id",
                    "user_id",
                    "title",
                    "at",
                    returns=["id"],
                ),
                Sql("UPDATE users SET last_active = ? WHERE id = ?", "at", "user_id", expect=1),
            ],
            params={
                "user_id": Param.row("users"),
                "title": Param.text(2, 6),
                "at": Param.integer(FIRST_DAY, FIRST_DAY + 10**8),
            },
            weight=15,
        ),
        Write(
            "toggle",
            "POST /todos/{id}/toggle",
            # expect=1: a to-do that does not exist changes no row, and the request is answered 409.
            [Sql("UPDATE todos SET done = 1 - done WHERE id = ?", "id", expect=1)],
            params={"id": Param.row("todos")},
            weight=5,
        ),
    ],
)
