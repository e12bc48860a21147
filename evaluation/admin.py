"""Verify-all runs with their questions, to look into: read-only, as the verifier's records are (`RecordOnly`):
each records what a run did, and an edit would falsify it."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from evaluation.models import VerifyRun, VerifyRunItem
from verifier.admin import RecordOnly


class RunItemInline(RecordOnly, admin.TabularInline[VerifyRunItem, VerifyRun]):
    model = VerifyRunItem
    fields = ["golden", "asked_as", "beyond_audience", "answer", "status", "error", "seconds"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[VerifyRunItem]:
        return super().get_queryset(request).select_related("golden", "answer__question")


@admin.register(VerifyRun)
class VerifyRunAdmin(RecordOnly, admin.ModelAdmin[VerifyRun]):
    list_display = ["label", "status", "mode", "audience", "total", "started_by", "started_at", "finished_at"]
    list_filter = ["status", "mode", "audience"]
    list_select_related = ["started_by"]
    search_fields = ["label"]
    date_hierarchy = "started_at"
    inlines = [RunItemInline]
