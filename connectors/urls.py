from django.urls import path

from connectors import views

urlpatterns = [
    path("", views.connectors_page, name="connectors"),
    path("<int:connection_id>/<str:action>/", views.connection_action, name="connection-action"),
]
