from django.contrib.auth import views as auth_views
from django.urls import path
from tracker import views

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(template_name="tracker/login.html")),
    path("assets/", views.asset_list),
    path("assets/<int:asset_id>/", views.asset_detail),
    path("incidents/new/", views.new_incident),
    path("incidents/<int:incident_id>/", views.incident_detail),
    path("contact/", views.contact),
]
