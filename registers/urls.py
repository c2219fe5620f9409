"""REST twins of the register tools, under /api/v1/."""

from django.urls import path

from brain.api.tools import tool_view

urlpatterns = [
    path("commitments", tool_view("list_commitments", "get").as_view(), name="api-commitments"),
    path("commitments/record", tool_view("record_commitment", "post").as_view(), name="api-record-commitment"),
    path("commitments/<str:id>", tool_view("update_commitment", "post").as_view(), name="api-update-commitment"),
    path("contradictions", tool_view("list_contradictions", "get").as_view(), name="api-contradictions"),
    path("contradictions/raise", tool_view("raise_contradiction", "post").as_view(), name="api-raise-contradiction"),
    path(
        "contradictions/<str:id>/answer",
        tool_view("answer_contradiction", "post").as_view(),
        name="api-answer-contradiction",
    ),
    path("glossary", tool_view("glossary", "get").as_view(), name="api-glossary"),
    path("glossary/define", tool_view("define_term", "post").as_view(), name="api-define-term"),
    path("glossary/<str:id>", tool_view("update_term", "post").as_view(), name="api-update-term"),
]
