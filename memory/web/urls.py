from django.urls import path

from memory.web.changes import delete_page, make_personal_page
from memory.web.documents import document_page
from memory.web.entities import entity_page
from memory.web.library import documents_page, entities_page
from memory.web.memories import forget_memory, my_memories
from memory.web.reviews import document_review, review_page
from memory.web.search import search_page
from memory.web.trash import delete_for_good_page, restore_page, trash_page

urlpatterns = [
    path("search/", search_page, name="memory-search"),
    path("documents/", documents_page, name="memory-documents"),
    path("documents/<int:document_id>/", document_page, name="memory-document"),
    path("documents/<int:document_id>/delete/", delete_page, name="memory-document-delete"),
    path("documents/<int:document_id>/make-personal/", make_personal_page, name="memory-document-make-personal"),
    path("documents/<int:document_id>/review/<str:action>/", document_review, name="memory-document-review"),
    path("review/", review_page, name="memory-review"),
    path("entities/", entities_page, name="memory-entities"),
    path("entities/<int:entity_id>/", entity_page, name="memory-entity"),
    path("mine/", my_memories, name="memory-mine"),
    path("mine/forget/", forget_memory, name="memory-forget"),
    path("trash/", trash_page, name="memory-trash"),
    path("trash/<int:document_id>/restore/", restore_page, name="memory-trash-restore"),
    path("trash/<int:document_id>/delete/", delete_for_good_page, name="memory-trash-delete"),
]
