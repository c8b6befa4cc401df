"""The views, written as an ordinary Django app would: lazy relations and a permission check per
object, so the list page sends dozens of queries per request (the N+1 is the ORM's own); and a
contact form for visitors who never log in, answered with a thank-you page and no id."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .forms import ContactForm
from .models import Asset, Incident, Membership, Message

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


def contact(request):
    """The contact form: its page sets the CSRF cookie; a message is kept and thanked for, one whose
    honeypot is filled thanked for and dropped, an invalid one shown again with its errors."""
    form = ContactForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        sent = form.cleaned_data
        if not sent["website"]:
            Message.objects.create(
                name=sent["name"], email=sent["email"], subject=sent["subject"], body=sent["message"]
            )
        return render(request, "tracker/thanks.html", {"email": sent["email"]})
    return render(request, "tracker/contact.html", {"form": form})
