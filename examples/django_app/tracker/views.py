"""The views, written as an ordinary Django app would: lazy relations and a permission check per
object, so the list page sends dozens of queries per request (the N+1 is the ORM's own)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .models import Asset, Incident, Membership

PAGE = 20


def can_see(user, asset: Asset) -> bool:
    """The per-object permission check: one query per asset."""
    return Membership.objects.filter(user=user, team_id=asset.team_id).exists()


@login_required
def asset_list(request):
    assets = Asset.objects.order_by("id")[:PAGE]
    rows = []
    for asset in assets:
        if can_see(request.user, asset):
            # asset.team is a lazy load, and the latest incident one more query per asset
            latest = asset.incidents.order_by("-id").first()
            rows.append((asset, asset.team.name, latest))
    return render(request, "tracker/assets.html", {"rows": rows})


@login_required
def asset_detail(request, asset_id: int):
    asset = get_object_or_404(Asset, pk=asset_id)
    if not can_see(request.user, asset):
        raise Http404("no such asset")
    incidents = list(asset.incidents.order_by("-id")[:10])
    return render(request, "tracker/asset.html", {"asset": asset, "incidents": incidents})


@login_required
@require_POST
def new_incident(request):
    asset = get_object_or_404(Asset, pk=request.POST.get("asset"))
    if not can_see(request.user, asset):
        return HttpResponseForbidden("not your team's asset")
    title = request.POST.get("title", "").strip()[:200] or "untitled"
    incident = Incident.objects.create(asset=asset, title=title, reported_by=request.user)
    return redirect(f"/incidents/{incident.pk}/")


@login_required
def incident_detail(request, incident_id: int):
    incident = get_object_or_404(Incident.objects.select_related("asset"), pk=incident_id)
    return render(request, "tracker/incident.html", {"incident": incident})
