"""The OAuth endpoints under /oauth/, named as the toolkit's views expect (``oauth2_provider:``)."""

from __future__ import annotations

from django.urls import path
from oauth2_provider import views as toolkit

from brain.oauth import views

app_name = "oauth2_provider"

urlpatterns = [
    path("authorize/", views.ConsentView.as_view(), name="authorize"),
    path("token/", views.TokenEndpoint.as_view(), name="token"),
    path("revoke/", toolkit.RevokeTokenView.as_view(), name="revoke-token"),
    path("register/", views.RegisterView.as_view(), name="dcr-register"),
    path(
        "register/<path:client_id>/",
        views.RegistrationView.as_view(),
        name="dcr-register-management",
    ),
]
