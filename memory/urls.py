from django.urls import path

from memory.api import DocumentsView, DocumentView

urlpatterns = [
    path("documents", DocumentsView.as_view(), name="api-documents"),
    path("documents/<str:document_id>", DocumentView.as_view(), name="api-document"),
]
