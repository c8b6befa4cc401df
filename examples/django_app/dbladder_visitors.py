"""What a visitor of the example app sends, the app deployed behind a TLS proxy as a site is: no
login; each session starts at the contact form, whose page sets Django's CSRF cookie; messages
posted through it, answered with a thank-you page and no id, each found afterwards by the unique
subject it sent.

    dbladder run --db sqlite:////tmp/tracker.db \\
        --app 'TRACKER_BEHIND_TLS_PROXY=1 gunicorn incidents_site.wsgi -b 127.0.0.1:{port} -w 2' \\
        --app-setup 'python manage.py migrate && python manage.py seed_tracker' \\
        --app-ready /contact/ --requests dbladder_visitors.py

Behind the proxy (TRACKER_BEHIND_TLS_PROXY=1) Django takes a request for HTTPS only when it says
X-Forwarded-Proto: https (plain HTTP is redirected), and its CSRF check on HTTPS refuses a form
posted without a Referer (or Origin) of the site itself over https: the file's headers say both,
for every request and for each session's first page.
"""

from dbladder.app.requests import Acknowledge, Csrf, Param, Request, Requests, Visit

requests = Requests(
    headers={"X-Forwarded-Proto": "https", "Referer": "https://{host}/contact/"},
    visit=Visit("/contact/", csrf=Csrf.cookie("csrftoken", field="csrfmiddlewaretoken")),
    sessions=8,
    requests=[
        Request("contact page", "GET", "/contact/", weight=50),
        Request(
            "message",
            "POST",
            "/contact/",
            weight=50,
            form={
                "name": "visitor {session}",
                "email": "visitor{session}@example.com",
                "subject": "{reference}",
                "message": "{words}",
            },
            params={"reference": Param.unique(), "words": Param.text(5, 20)},
            acknowledge=Acknowledge.sent("reference", contains="Thank you"),
            find="SELECT count(*) FROM tracker_message WHERE subject = ?",
        ),
    ],
)
