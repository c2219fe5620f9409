from django.urls import path

from connectors import hooks, views

urlpatterns = [
    path("", views.connectors_page, name="connectors"),
    path("hooks/github/<int:connection_id>/", hooks.github_hook, name="github-hook"),
    path("hooks/slack/<int:connection_id>/", hooks.slack_hook, name="slack-hook"),
    path("<int:connection_id>/<str:action>/", views.connection_action, name="connection-action"),
]
