"""Assets, the teams that own them, who may see a team's assets, and incidents on assets: the
shape of the app of "PostgreSQL vs SQLite, 2026 edition"."""

from django.conf import settings
from django.db import models


class Team(models.Model):
    name = models.CharField(max_length=80)


class Membership(models.Model):
    """A user may see and report on the assets of a team they belong to."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    team = models.ForeignKey(Team, on_delete=models.CASCADE)

    class Meta:
        unique_together = [("user", "team")]  # noqa: RUF012 (Django reads Meta as plain class data)


class Asset(models.Model):
    name = models.CharField(max_length=120)
    team = models.ForeignKey(Team, on_delete=models.CASCADE)
    location = models.CharField(max_length=120)


class Incident(models.Model):
    asset = models.ForeignKey(Asset, on_delete=models.CASCADE, related_name="incidents")
    title = models.CharField(max_length=200)
    reported_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)


class Message(models.Model):
    """A visitor's message from the contact form: no login, no id shown back (a thank-you page)."""

    name = models.CharField(max_length=120)
    email = models.EmailField()
    subject = models.CharField(max_length=200)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
