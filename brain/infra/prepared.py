"""Querysets composed once per process and then run with new values.

The ORM spent longer composing the bearer token's row (a join of seven tables with two
subqueries) than Postgres spent running it: about 1.2 ms of Python a call, before Postgres
planned it again for another 1 ms (docs/benchmarks-log.md, "The call path"). A statement every call
makes is therefore composed once, with a stand-in where each value goes; later runs bind the
values and build the objects as the ORM's own iterator does (the same SQL, related objects,
annotations and converters), through ``brain.infra.postgres.prepared_cursor`` so that Postgres plans
it once per connection too.

Only for fixed statements: the queryset may depend on nothing but its values. Building the
objects uses Django's ``get_related_populators``, an internal of the pinned version; the tests
compare every field with what the queryset itself answers, so an upgrade that changes it fails
there first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Generic, TypeVar

from django.db import connections, router
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]

from brain.infra.postgres import prepared_cursor

M = TypeVar("M", bound=Model)


def _stand_in(kind: type, index: int) -> Any:
    """A value of ``kind`` no real call passes, found again in the composed statement's parameters
    (the ORM may convert a value on its way there, never change it)."""
    if kind is str:
        return f"\x00slot {index}"
    if kind is int:
        return -(2**62) - index
    if kind is date:
        return date(1, 1, 1 + index)
    if kind is datetime:
        return datetime(1, 1, 1, 0, 0, index)  # noqa: DTZ001 (never sent: a value takes its place)
    raise TypeError(f"no stand-in for {kind.__name__}")


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, str], ...]  # (position in params, slot name)
    start: int
    end: int
    init_list: tuple[str, ...]
    converters: tuple[tuple[int, tuple[Any, ...], Any], ...]
    populators: tuple[Any, ...]
    annotations: tuple[tuple[str, int], ...]


class Prepared(Generic[M]):
    """``build(**values)`` returns the queryset; ``first(**values)`` runs it and answers its first
    object or None, as ``QuerySet.first`` would. ``slots`` name each value and its type; ``build``
    is called once per database alias, with a stand-in for each."""

    def __init__(self, build: Callable[..., QuerySet[M]], **slots: type) -> None:
        self.build = build
        self.stand_ins = {name: _stand_in(kind, index) for index, (name, kind) in enumerate(slots.items())}
        self._compiled: dict[str, _Compiled] = {}
        self._model: type[M] | None = None

    def first(self, **values: Any) -> M | None:
        if self._model is None:
            self._model = self.build(**self.stand_ins).model
        alias = router.db_for_read(self._model)
        compiled = self._compiled.get(alias) or self._compile(alias)
        params = list(compiled.params)
        for position, name in compiled.slots:
            params[position] = values[name]
        connection = connections[alias]
        with prepared_cursor(alias) as cursor:
            cursor.execute(compiled.sql, params)
            found = cursor.fetchone()
        if found is None:
            return None
        row = list(found)
        for position, converters, expression in compiled.converters:
            value = row[position]
            for convert in converters:
                value = convert(value, expression, connection)
            row[position] = value
        obj: M = self._model.from_db(alias, compiled.init_list, row[compiled.start : compiled.end])
        for populator in compiled.populators:
            populator.populate(row, obj)
        for name, position in compiled.annotations:
            setattr(obj, name, row[position])
        return obj

    def _compile(self, alias: str) -> _Compiled:
        queryset = self.build(**self.stand_ins)
        queryset = (queryset if queryset.ordered else queryset.order_by("pk"))[:1]  # as QuerySet.first()
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        found = tuple(
            (i, name)
            for i, param in enumerate(params)
            for name, stand_in in self.stand_ins.items()
            if type(param) is type(stand_in) and param == stand_in
        )
        if {name for _, name in found} != set(self.stand_ins):
            raise ValueError(f"each value must reach the statement unchanged: {list(self.stand_ins)} in {params}")
        select, klass_info = compiler.select, compiler.klass_info
        fields = [s[0] for s in select[: compiler.col_count]]
        start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        compiled = _Compiled(
            sql=sql,
            params=tuple(params),
            slots=found,
            start=start,
            end=end,
            init_list=tuple(f[0].target.attname for f in select[start:end]),
            converters=tuple(
                (pos, tuple(convs), expr) for pos, (convs, expr) in compiler.get_converters(fields).items()
            ),
            populators=tuple(get_related_populators(klass_info, select, alias)),
            annotations=tuple(compiler.annotation_col_map.items()),
        )
        self._compiled[alias] = compiled
        return compiled
