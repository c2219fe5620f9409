from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from brain import views
from brain.oauth import views as oauth_views
from jobs import views as jobs_views
from overview import audit as audit_views
from registers.views import answer_page, decide_term_page, propose_page, registers_page, settle_commitment

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/", views.account, name="account"),
    path("connect/", views.connect, name="connect"),
    path("connect/tokens/<int:token_id>/revoke/", views.revoke, name="revoke-token"),
    path("connect/apps/", oauth_views.connected_apps, name="connected-apps"),
    path("connect/apps/<int:connection_id>/disconnect/", oauth_views.disconnect, name="disconnect-app"),
    path("oauth/", include("brain.oauth.urls")),
    path("sso/", include("brain.sso.urls")),
    path(".well-known/oauth-authorization-server", oauth_views.authorization_server_metadata, name="oauth-metadata"),
    path(
        ".well-known/oauth-protected-resource",
        oauth_views.protected_resource_metadata,
        name="oauth-resource-metadata-root",
    ),
    path(
        ".well-known/oauth-protected-resource/mcp",
        oauth_views.protected_resource_metadata,
        name="oauth-resource-metadata",
    ),
    path("invitation/<str:uidb64>/<str:token>/", views.accept_invitation, name="accept-invitation"),
    path("invitations/", views.invitations, name="invitations"),
    path("invitations/<uuid:invitation_id>/<str:answer>/", views.answer_invitation_view, name="answer-invitation"),
    path("", include("contacts.urls")),
    path("registers/", registers_page, name="registers"),
    path("registers/commitments/<int:commitment_id>/settle/", settle_commitment, name="registers-settle"),
    path("registers/contradictions/<int:contradiction_id>/answer/", answer_page, name="registers-answer"),
    path("registers/glossary/propose/", propose_page, name="registers-propose"),
    path("registers/glossary/<int:term_id>/decide/", decide_term_page, name="registers-decide-term"),
    path("jobs/", jobs_views.jobs_page, name="jobs"),
    path("jobs/new/", jobs_views.new_job, name="job-new"),
    path("jobs/<int:job_id>/edit/", jobs_views.edit_job, name="job-edit"),
    path("jobs/runs/<int:org_id>/", jobs_views.runs_part, name="job-runs"),
    path("jobs/status/<int:org_id>/", jobs_views.status_part, name="job-status"),
    path("jobs/<int:job_id>/<str:action>/", jobs_views.job_action, name="job-action"),
    path("jobs/chats/<int:chat_id>/", jobs_views.chat_page, name="job-chat"),
    path("overview/", include("overview.urls")),
    path("audit/", audit_views.audit_home, name="audit"),
    path("audit/<slug:slug>/", audit_views.audit_page, name="audit-trail"),
    path("audit/<slug:slug>/export/", audit_views.audit_export, name="audit-export"),
    path("connectors/", include("connectors.urls")),
    path("memory/", include("memory.web.urls")),
    path("skills/", include("skills.urls")),
    path("knowledge/", include("memory.upload.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("brain.api.urls")),
]

handler500 = "brain.api.exceptions.server_error"  # JSON under /api/ (brain.api.exceptions)
