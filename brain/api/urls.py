from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from brain.api.tools import tool_view
from usage.api import UsageView

urlpatterns = [
    path("init", tool_view("init", "get").as_view(), name="api-init"),
    path("health", tool_view("health", "get").as_view(), name="api-health"),
    path("profile", tool_view("get_profile", "get").as_view(), name="api-profile"),
    path("usage", UsageView.as_view(), name="api-usage"),
    path("activities", tool_view("start_company_memory_activity", "post").as_view(), name="api-activities"),
    path("reports/issues", tool_view("report_issue", "post").as_view(), name="api-report-issue"),
    path("reports/feedback", tool_view("send_feedback", "post").as_view(), name="api-feedback"),
    path("", include("memory.urls")),
    path("", include("registers.urls")),
    path("", include("jobs.urls")),
    path("search", tool_view("search_company_memory", "post").as_view(), name="api-search"),
    path("retrieve", tool_view("retrieve_company_memory", "post").as_view(), name="api-retrieve"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "docs/",
        SpectacularSwaggerView.as_view(url_name="api-schema", template_name="api/swagger_ui.html"),
        name="api-docs",
    ),
    path(
        "redoc/", SpectacularRedocView.as_view(url_name="api-schema", template_name="api/redoc.html"), name="api-redoc"
    ),
]
