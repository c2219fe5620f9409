from django.urls import path

from memory.upload import views

urlpatterns = [
    path("add/", views.add_knowledge, name="add-knowledge"),
    path("documents/<int:document_id>/status/", views.document_status, name="add-knowledge-status"),
    path("documents/<int:document_id>/retry/", views.retry, name="add-knowledge-retry"),
    path("uploads/<int:upload_id>/status/", views.upload_status_view, name="add-knowledge-upload-status"),
    path("uploads/<int:upload_id>/retry/", views.retry_upload_view, name="add-knowledge-upload-retry"),
]
