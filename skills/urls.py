from django.urls import path

from skills import views

urlpatterns = [
    path("<slug:slug>/", views.skill_page, name="skill"),
    path("<slug:slug>/<str:action>/", views.skill_review, name="skill-review"),
]
