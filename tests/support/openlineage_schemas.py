"""Validate OpenLineage run events against the official spec schemas vendored in ``tests/openlineage_spec``.

Every ``$ref`` is resolved through a local ``referencing.Registry`` built from the vendored files, keyed by their
``$id``; nothing is ever fetched from the network (an unknown reference is an error, not a download).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

SPEC_DIR = Path(__file__).resolve().parents[1] / "openlineage_spec"
CORE_FILE = "OpenLineage.json"
BASE_FACET_FIELDS = ("_producer", "_schemaURL")

# Longer messages (jsonschema repeats the whole instance for anyOf/oneOf failures) are cut to keep reports readable.
_MAX_MESSAGE = 300
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RFC3339_DATE_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
# RFC 3986 absolute URI: a scheme, a colon, then no whitespace or characters URIs never carry unescaped.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`]*")


def _format_checker() -> FormatChecker:
    """Formats the spec uses (``uuid``, ``date-time``, ``uri``), checked the same way in every environment.

    jsonschema's own ``date-time`` and ``uri`` checkers silently do nothing unless optional packages are installed,
    so results would depend on the virtualenv; these two are implemented here instead.
    """
    checker = FormatChecker(formats=("uuid",))

    @checker.checks("date-time", raises=ValueError)
    def _date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        match = _RFC3339_DATE_TIME.fullmatch(value)
        if match is None:
            return False
        year, month, day, hour, minute, second, _fraction, offset = match.groups()
        # RFC 3339 allows a leap second (:60); datetime does not, so check the rest of the fields with :59.
        datetime(int(year), int(month), int(day), int(hour), int(minute), min(int(second), 59))
        if offset not in ("Z", "z"):
            hours, minutes = offset[1:].split(":")
            return int(hours) <= 23 and int(minutes) <= 59
        return True

    @checker.checks("uri")
    def _uri(value: object) -> bool:
        return not isinstance(value, str) or _URI.fullmatch(value) is not None

    return checker


@dataclass(frozen=True)
class _Spec:
    """The vendored documents: the core schema, the facet schemas by file name, and a registry of all by ``$id``."""

    core: dict[str, Any]
    facets: dict[str, dict[str, Any]]
    registry: Registry[Any]
    format_checker: FormatChecker

    def validator(self, schema: Mapping[str, Any]) -> Draft202012Validator:
        # An explicit registry replaces jsonschema's default one, which would retrieve unknown URLs remotely.
        return Draft202012Validator(schema, registry=self.registry, format_checker=self.format_checker)


@cache
def _spec() -> _Spec:
    documents = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in sorted(SPEC_DIR.glob("*.json"))}
    if CORE_FILE not in documents:
        raise FileNotFoundError(f"{SPEC_DIR / CORE_FILE} is missing; see {SPEC_DIR / 'README.md'}")
    resources: dict[str, Resource[Any]] = {}
    for name, document in documents.items():
        uri = document.get("$id")
        if not uri or uri in resources:
            raise ValueError(f"{name}: missing or duplicate $id {uri!r}")
        resources[uri] = Resource.from_contents(document, default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resources(resources.items()).crawl()
    facets = {name: document for name, document in documents.items() if name != CORE_FILE}
    return _Spec(core=documents[CORE_FILE], facets=facets, registry=registry, format_checker=_format_checker())


@cache
def _validator_for(file_name: str, fragment: str | None = None) -> Draft202012Validator:
    """A validator for a whole vendored file, or for the definition at ``fragment`` (a JSON pointer) inside it."""
    spec = _spec()
    document = spec.core if file_name == CORE_FILE else spec.facets[file_name]
    schema = document if fragment is None else {"$ref": f"{document['$id']}#{fragment}"}
    return spec.validator(schema)


def _json_path(parts: Iterable[str | int]) -> str:
    """``$.inputs[0].facets['spark.logicalPlan']``-style path, like jsonschema's ``json_path``."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            path += f".{part}"
        else:
            path += f"[{part!r}]"
    return path


def _leaves(error: ValidationError) -> Iterator[ValidationError]:
    """The errors that say what is wrong, not the ``anyOf``/``oneOf`` wrappers around them.

    The core schema wraps every facet map in a single-branch ``anyOf``, which would otherwise hide each facet's
    real error (and its path) behind "is not valid under any of the given schemas".
    """
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        yield error
        return
    branches = {sub.relative_schema_path[0] for sub in error.context}
    if len(branches) == 1:
        for sub in error.context:
            yield from _leaves(sub)
        return
    # Several alternatives failed: keep the summary and add the most relevant alternative's errors.
    yield error
    yield from _leaves(best_match(error.context))


@dataclass(frozen=True)
class _Violation:
    path: str
    message: str
    schema: str

    def __str__(self) -> str:
        message = self.message if len(self.message) <= _MAX_MESSAGE else self.message[:_MAX_MESSAGE] + "..."
        return f"{self.path}: {message} [{self.schema}]"


def _violations(
    validator: Draft202012Validator, instance: Any, prefix: tuple[str | int, ...], schema: str, drop: int = 0
) -> Iterator[_Violation]:
    """Errors of ``instance``; their paths get ``prefix`` after their first ``drop`` parts are removed."""
    for error in validator.iter_errors(instance):
        for leaf in _leaves(error):
            parts = (*prefix, *list(leaf.absolute_path)[drop:])
            yield _Violation(_json_path(parts), leaf.message, schema)


def _facets(event: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str, Any]]:
    """(path, key, facet) for every run, job, dataset, input and output facet of a run event."""

    def facet_map(container: Any, prefix: tuple[str | int, ...], field: str) -> Iterator[tuple[Any, ...]]:
        facets = container.get(field) if isinstance(container, Mapping) else None
        if isinstance(facets, Mapping):  # anything else is already a core-schema violation
            for key, facet in facets.items():
                yield (*prefix, field, key), key, facet

    yield from facet_map(event.get("run"), ("run",), "facets")
    yield from facet_map(event.get("job"), ("job",), "facets")
    for side, own_facets in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        datasets = event.get(side)
        if isinstance(datasets, list):
            for index, dataset in enumerate(datasets):
                yield from facet_map(dataset, (side, index), "facets")
                yield from facet_map(dataset, (side, index), own_facets)


def _has_pointer(document: Mapping[str, Any], pointer: str) -> bool:
    """Whether the JSON pointer resolves inside the vendored document (through the registry, never the network)."""
    try:
        _spec().registry.resolver().lookup(f"{document['$id']}#{pointer}")
    except Unresolvable:
        return False
    return True


def _facet_violations(
    path: tuple[str | int, ...], key: str, facet: Mapping[str, Any], file_name: str, url: str
) -> Iterator[_Violation]:
    """Validate one facet against its own vendored schema file."""
    document = _spec().facets[file_name]
    properties = document.get("properties", {})
    fragment = unquote(urlsplit(url).fragment)
    if key in properties:
        # The spec's intended use: a facet file describes the facet map entry ``{key: facet}``. Error paths start
        # with ``key``; drop it and put the facet's full path in front instead.
        yield from _violations(_validator_for(file_name), {key: facet}, path, file_name, drop=1)
    elif fragment.startswith("/") and _has_pointer(document, fragment):
        # A spec facet stored under a non-standard key: ``{key: facet}`` would match no property and pass without
        # checking anything, so validate it against the definition its URL points at.
        yield from _violations(_validator_for(file_name, fragment), facet, path, f"{file_name}#{fragment}")
    elif len(properties) == 1:
        (only,) = properties
        yield from _violations(_validator_for(file_name), {only: facet}, path, file_name, drop=1)
    else:
        yield _Violation(_json_path(path), f"facet key {key!r} matches none of {sorted(properties)}", file_name)


def validate_event(event: dict[str, Any]) -> list[str]:
    """Validate a serialized run event and each of its facets against the vendored OpenLineage schemas.

    Raises AssertionError listing every violation with its JSON path. Returns the facets (``path: _schemaURL``) that
    have no facet schema here, e.g. Airflow's own ``airflow``/``airflowState``/``debug`` facets: only the BaseFacet
    contract of the core schema applies to those.
    """
    spec = _spec()
    core_id = spec.core["$id"]
    # Validate against RunEvent first: the root ``oneOf`` (RunEvent | DatasetEvent | JobEvent) would report only
    # "is not valid under any of the given schemas" at ``$`` instead of the offending field.
    run_event = "/$defs/RunEvent"
    violations = list(_violations(_validator_for(CORE_FILE, run_event), event, (), f"{CORE_FILE}#{run_event}"))
    if not violations:
        violations = list(_violations(_validator_for(CORE_FILE), event, (), CORE_FILE))

    unvalidated: list[str] = []
    for path, key, facet in _facets(event):
        if not isinstance(facet, Mapping):
            continue  # the core schema reports non-object facets
        # The core schema already requires these; checked here too so a facet is never judged without them.
        for field in BASE_FACET_FIELDS:
            if field not in facet:
                violations.append(_Violation(_json_path(path), f"{field!r} is a required property", CORE_FILE))
        url = facet.get("_schemaURL")
        if not isinstance(url, str):
            continue
        file_name = PurePosixPath(urlsplit(url).path).name
        if file_name not in spec.facets:
            # Custom facets (Airflow's own use the core ``#/$defs/RunFacet`` URL) have no schema of their own here.
            unvalidated.append(f"{_json_path(path)}: {url}")
            continue
        violations.extend(_facet_violations(path, key, facet, file_name, url))

    # The same problem may be reported by the core schema, the explicit check and the facet schema: list it once.
    unique: dict[tuple[str, str], _Violation] = {}
    for violation in violations:
        unique.setdefault((violation.path, violation.message), violation)
    if unique:
        lines = "\n".join(f"  - {violation}" for violation in unique.values())
        raise AssertionError(f"{len(unique)} OpenLineage schema violation(s) (spec {core_id}):\n{lines}")
    return unvalidated
