"""The lineage model: what a SQL script read and wrote, down to columns. Frozen, engine-neutral.

Transformation types follow OpenLineage's column-lineage facet (spec 1-2-0): an edge is ``DIRECT`` when the
output value is computed from the input (``IDENTITY``, ``TRANSFORMATION``, ``AGGREGATION``) and ``INDIRECT``
when the input only decides which rows or values appear (``JOIN``, ``GROUP_BY``, ``FILTER``, ``SORT``,
``WINDOW``, ``CONDITIONAL``). ``masking`` marks inputs that cannot be recovered from the output (hashed,
counted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

DatasetKind = Literal["table", "file"]
Access = Literal["read", "write", "read_write"]
Lifecycle = Literal["CREATE", "OVERWRITE", "DROP", "ALTER", "RENAME", "TRUNCATE"]

DIRECT = "DIRECT"
INDIRECT = "INDIRECT"
DIRECT_SUBTYPES = ("IDENTITY", "TRANSFORMATION", "AGGREGATION")  # ordered: composing keeps the strongest


@dataclass(frozen=True, order=True)
class Dataset:
    """A table or a file.

    :param kind: ``table`` or ``file``.
    :param name: ``schema.table`` (``database.schema.table`` for a three-part name that is no attached
        catalog) or the file's URI (``s3://bucket/key``, ``file:///abs/path`` or a relative path as written).
    :param store: the attached store a table lives in, as a URI prefix (``ducklake://sales``,
        ``datatable://main``); ``None`` means the store the SQL runs against (the operator's own).
    """

    kind: DatasetKind
    name: str
    store: str | None = None

    @property
    def key(self) -> str:
        """``store/name`` or ``name``: how the corpus and reports spell it."""
        return f"{self.store}/{self.name}" if self.store else self.name

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True, order=True)
class Transformation:
    """How an input column reaches an output column (OpenLineage ``Transformation``)."""

    type: str
    subtype: str
    masking: bool = False

    def __str__(self) -> str:
        return f"{self.type} {self.subtype}{' masked' if self.masking else ''}"


@dataclass(frozen=True, order=True)
class InputColumn:
    """One lineage edge: column ``column`` of ``dataset`` reaches the output through ``transformation``."""

    dataset: Dataset
    column: str
    transformation: Transformation

    def __str__(self) -> str:
        return f"{self.dataset.key}.{self.column} {self.transformation}"


@dataclass(frozen=True)
class DatasetLineage:
    """Everything one script did to one dataset.

    :param dataset: the table or file.
    :param access: ``read``, ``write`` or ``read_write``.
    :param columns_read: columns the script read from it (sorted).
    :param columns_written: columns the script wrote into it (sorted).
    :param column_lineage: for each written column, its input edges (direct, conditional, window).
    :param dataset_lineage: edges that decide every written row (joins, filters, grouping, sorting).
    :param lifecycle: ``CREATE``, ``OVERWRITE``, ``DROP``, ``ALTER``, ``RENAME``, ``TRUNCATE`` or ``None``.
    """

    dataset: Dataset
    access: Access
    columns_read: tuple[str, ...] = ()
    columns_written: tuple[str, ...] = ()
    column_lineage: Mapping[str, tuple[InputColumn, ...]] = field(default_factory=dict)
    dataset_lineage: tuple[InputColumn, ...] = ()
    lifecycle: Lifecycle | None = None

    @property
    def is_input(self) -> bool:
        return self.access in ("read", "read_write")

    @property
    def is_output(self) -> bool:
        return self.access in ("write", "read_write")

    def edges(self, column: str) -> tuple[InputColumn, ...]:
        """All edges of written ``column``: its own plus the dataset-wide ones."""
        return tuple(sorted(set(self.column_lineage.get(column, ())) | set(self.dataset_lineage)))


@dataclass(frozen=True)
class LineageError:
    """A statement the extractor could not (fully) understand; its lineage is partial or missing.

    :param index: the statement's 1-based position in the script.
    :param statement: its text.
    :param message: what went wrong.
    :param partial: ``True`` when the statement's datasets were all reported and only some column edges
        are missing (e.g. a PIVOT whose column names depend on the data); ``False`` when the statement
        yielded nothing.
    """

    index: int
    statement: str
    message: str
    partial: bool = False


@dataclass(frozen=True)
class Lineage:
    """The lineage of one script (all its statements merged); temporary objects are resolved away.

    :param datasets: every persistent dataset touched, sorted by key.
    :param errors: statements that yielded partial or no lineage.
    :param statement_outputs: for each statement (1-based index) that wrote, the datasets it wrote (what
        per-statement row counts are attributed to).
    :param statements: how many statements the script has.
    """

    datasets: tuple[DatasetLineage, ...] = ()
    errors: tuple[LineageError, ...] = ()
    statement_outputs: Mapping[int, tuple[Dataset, ...]] = field(default_factory=dict)
    statements: int = 0

    @property
    def inputs(self) -> tuple[DatasetLineage, ...]:
        return tuple(d for d in self.datasets if d.is_input)

    @property
    def outputs(self) -> tuple[DatasetLineage, ...]:
        return tuple(d for d in self.datasets if d.is_output)

    def rows_written(self, counts: Mapping[int, int | None]) -> dict[Dataset, int]:
        """Attribute per-statement row counts (by 1-based statement index) to the datasets each wrote;
        statements without a count (DDL, or a driver's ``-1``) add nothing.

        >>> lineage = Lineage(statement_outputs={2: (Dataset("table", "s.t"),)})
        >>> lineage.rows_written({1: None, 2: 5})
        {Dataset(kind='table', name='s.t', store=None): 5}
        """
        written: dict[Dataset, int] = {}
        for index, datasets in self.statement_outputs.items():
            count = counts.get(index)
            if count is None or count < 0:
                continue
            for dataset in datasets:
                written[dataset] = written.get(dataset, 0) + int(count)
        return written

    def get(self, key: str) -> DatasetLineage | None:
        """The dataset whose :attr:`Dataset.key` is ``key``, if touched."""
        return next((d for d in self.datasets if d.dataset.key == key), None)
