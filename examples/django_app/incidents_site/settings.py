"""Settings of the example app: the database comes from DATABASE_URL, as dbladder gives it.

sqlite:////abs/path.db, postgres://user@host:port/name (psycopg), mysql://user@host:port/name
(Django's MySQL backend over PyMySQL, which installs from a wheel). A password comes from
PGPASSWORD / MYSQL_PWD, never from the URL.
"""

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-only-not-secret")
DEBUG = False
ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "tracker",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "incidents_site.urls"
TEMPLATES = [{"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [], "APP_DIRS": True}]
WSGI_APPLICATION = "incidents_site.wsgi.application"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/assets/"
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The example's users log in once per session before the load: a fast hasher keeps the setup
# short; what is measured is the load after it, not the password's hashing.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Behind a TLS proxy (TRACKER_BEHIND_TLS_PROXY=1), as a deployed site runs: the proxy says the
# request came over HTTPS in X-Forwarded-Proto, plain HTTP is redirected to HTTPS, the cookies
# are Secure, and Django's CSRF check on HTTPS also wants an Origin or Referer of this site.
if os.environ.get("TRACKER_BEHIND_TLS_PROXY") == "1":
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True


def database_from_url(url: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": unquote(parts.path)[1:] or ":memory:"}
    common = {
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "HOST": unquote(parts.hostname or ""),
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": 60,  # one connection per worker, as a deployed app keeps
    }
    if parts.scheme in ("postgres", "postgresql"):
        return {
            **common,
            "ENGINE": "django.db.backends.postgresql",
            "PASSWORD": os.environ.get("PGPASSWORD", ""),
        }
    if parts.scheme in ("mysql", "mariadb"):
        import pymysql

        pymysql.install_as_MySQLdb()
        return {
            **common,
            "ENGINE": "django.db.backends.mysql",
            "PASSWORD": os.environ.get("MYSQL_PWD", ""),
            "OPTIONS": {"charset": "utf8mb4"},
        }
    raise ValueError(f"DATABASE_URL has a scheme this example does not know: {parts.scheme}")


DATABASES = {"default": database_from_url(os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR}/example.db"))}
