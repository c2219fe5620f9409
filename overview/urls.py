from django.urls import path

from overview import views

urlpatterns = [
    path("", views.overview_page, name="overview"),
    path("documents/<int:document_id>/retry/", views.retry, name="overview-retry"),
]
