"""`python manage.py seed_tracker`: users user1..userN (password "pw"), teams, memberships, assets."""

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import transaction

from tracker.models import Asset, Membership, Team


class Command(BaseCommand):
    help = "Seed the example app's data (idempotent: does nothing when users exist)."

    def add_arguments(self, parser):
        parser.add_argument("--users", type=int, default=16)
        parser.add_argument("--assets", type=int, default=400)

    @transaction.atomic
    def handle(self, *args, users: int, assets: int, **options):
        if User.objects.exists():
            self.stdout.write("already seeded")
            return
        Team.objects.bulk_create([Team(name=f"team {n}") for n in range(1, 9)])
        people = [User(username=f"user{n}") for n in range(1, users + 1)]
        for person in people:
            person.set_password("pw")
        User.objects.bulk_create(people)
        # read back: MariaDB's bulk_create gives no ids to the objects
        teams, people = list(Team.objects.order_by("id")), list(User.objects.order_by("id"))
        # every user is in every team: each per-object check is a query that passes, as it mostly does
        Membership.objects.bulk_create(
            Membership(user=person, team=team) for person in people for team in teams
        )
        Asset.objects.bulk_create(
            Asset(name=f"asset {n}", team=teams[n % len(teams)], location=f"room {n % 40}")
            for n in range(1, assets + 1)
        )
        self.stdout.write(f"seeded {users} users, {len(teams)} teams, {assets} assets")
