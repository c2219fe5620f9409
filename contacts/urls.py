from django.urls import path

from contacts import views

urlpatterns = [
    path("answer/<str:token>/", views.answer, name="answer"),
    path("requests/", views.my_requests, name="my-requests"),
    path("requests/<str:public_id>/", views.request_detail, name="request-detail"),
    path("requests/<str:public_id>/save/", views.save_to_memory, name="request-save"),
    path("requests/<str:public_id>/answer/", views.answer_here, name="request-answer"),
]
