from django.urls import path

from brain.sso import views

urlpatterns = [
    path("", views.sso_find, name="sso-find"),
    path("callback/", views.sso_callback, name="sso-callback"),
    path("<slug:org_slug>/login/", views.SsoLoginView.as_view(), name="sso-login"),
]
