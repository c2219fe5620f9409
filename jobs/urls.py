"""REST twins of the job tools, under /api/v1/."""

from django.urls import path

from brain.api.tools import tool_view

urlpatterns = [
    path("jobs", tool_view("list_jobs", "get").as_view(), name="api-jobs"),
    path("jobs/once", tool_view("schedule_once", "post").as_view(), name="api-schedule-once"),
    path("jobs/recurring", tool_view("schedule_job", "post").as_view(), name="api-schedule-job"),
    path("jobs/<str:id>", tool_view("update_job", "post").as_view(), name="api-update-job"),
]
