from django.urls import path

from brain.api.tools import tool_view
from memory.api import DocumentsView, DocumentView

urlpatterns = [
    path("documents", DocumentsView.as_view(), name="api-documents"),
    path("documents/<str:document_id>", DocumentView.as_view(), name="api-document"),
    path("ask", tool_view("ask_company_memory", "post").as_view(), name="api-ask"),
    path("facts/search", tool_view("search_facts", "post").as_view(), name="api-facts-search"),
    path("entities", tool_view("find_entity", "get").as_view(), name="api-entities"),
    path("entities/explore", tool_view("explore_entity", "get").as_view(), name="api-explore"),
    path("overview", tool_view("get_schema", "get").as_view(), name="api-overview"),
    path("episodes", tool_view("recent_episodes", "get").as_view(), name="api-episodes"),
    path("timeline", tool_view("memory_timeline", "get").as_view(), name="api-timeline"),
    path("values", tool_view("lookup_values", "get").as_view(), name="api-values"),
    path("memories", tool_view("remember", "post").as_view(), name="api-remember"),
    path("memories/<str:memory_id>", tool_view("forget", "delete").as_view(), name="api-forget"),
]
