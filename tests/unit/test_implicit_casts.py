"""The writer's casts of a statement's values into a column's type, refereed by DuckDB 1.5's own ``CAST`` of the same
Arrow values (random decimals of every width, carries, ties, floats, text both ways)."""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Context, Decimal
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from airflow_provider_lakehouse.ducklake import implicit_casts
from airflow_provider_lakehouse.ducklake.implicit_casts import cast_as_duckdb


def duckdb_cast(array: pa.Array, duckdb_type: str) -> list[Any] | str:
    """DuckDB's result of ``CAST(v AS duckdb_type)`` over ``array``, or ``"error"``."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("input", pa.table({"v": array}))
    try:
        return con.sql(f"SELECT CAST(v AS {duckdb_type}) AS v FROM input").to_arrow_table().column("v").to_pylist()
    except duckdb.Error:
        return "error"
    finally:
        con.close()


def ours(array: pa.Array, target: pa.DataType) -> list[Any] | str:
    try:
        return cast_as_duckdb(array, target).to_pylist()
    except pa.ArrowInvalid:
        return "error"


def same(left: list[Any] | str, right: list[Any] | str) -> bool:
    def key(value: Any) -> Any:
        return "nan" if isinstance(value, float) and math.isnan(value) else value

    if isinstance(left, str) or isinstance(right, str):
        return left == right
    return [key(v) for v in left] == [key(v) for v in right]


def random_decimals(rng: random.Random, precision: int, scale: int, count: int, nines: bool = False) -> pa.Array:
    values: list[Decimal | None] = []
    for _ in range(count):
        digits = rng.randint(1, precision)
        unscaled = rng.choice([1, -1]) * (10**digits - 1) if nines else rng.randint(-(10**digits - 1), 10**digits - 1)
        values.append(Decimal(unscaled).scaleb(-scale, Context(prec=80)))  # the default 28 digits would round
    # through text: pa.array() of Decimal objects infers a precision from the first value and refuses wider ones
    return pa.array([None if v is None else f"{v:f}" for v in [*values, None]]).cast(pa.decimal128(precision, scale))


WIDTHS = [(4, 2), (6, 5), (10, 2), (17, 9), (18, 0), (18, 3), (18, 17), (19, 2), (30, 5), (38, 0), (38, 10)]


@pytest.mark.parametrize(("precision", "scale"), WIDTHS)
@pytest.mark.parametrize(("target", "name"), [(pa.float64(), "DOUBLE"), (pa.float32(), "FLOAT")])
def test_decimals_to_floats_as_duckdb(precision: int, scale: int, target: pa.DataType, name: str) -> None:
    array = random_decimals(random.Random(precision * 100 + scale), precision, scale, 2000)
    theirs = duckdb_cast(array, name)
    assert ours(array, target) == theirs, f"DECIMAL({precision}, {scale}) to {name}"


def test_the_reported_double_is_duckdbs() -> None:
    # pyarrow multiplies by a rounded 10^-5 and 10^-1: 3.1415900000000003 and 1.5000000000000002
    array = pa.array([Decimal("3.14159"), Decimal("1.50000")], pa.decimal128(6, 5))
    assert cast_as_duckdb(array, pa.float64()).to_pylist() == [3.14159, 1.5]


@pytest.mark.parametrize(("precision", "scale"), [(w, s) for w, s in WIDTHS if s > 0])
@pytest.mark.parametrize("nines", [False, True], ids=["random", "carries"])
def test_decimals_to_fewer_digits_round_as_duckdb(precision: int, scale: int, nines: bool) -> None:
    array = random_decimals(random.Random(precision + scale), precision, scale, 1000, nines)
    for target_precision, target_scale in [(10, 2), (5, 0), (38, 0), (18, 1), (7, 4)]:
        if target_scale >= scale:
            continue
        target = pa.decimal128(target_precision, target_scale)
        theirs = duckdb_cast(array, f"DECIMAL({target_precision}, {target_scale})")
        assert ours(array, target) == theirs, f"DECIMAL({precision}, {scale}) to {target}"


def test_ties_round_away_from_zero_for_decimals_and_to_even_for_floats() -> None:
    decimals = pa.array([Decimal("2.5"), Decimal("-2.5"), Decimal("3.5"), Decimal("1.005")], pa.decimal128(4, 3))
    assert cast_as_duckdb(decimals, pa.int32()).to_pylist() == duckdb_cast(decimals, "INTEGER") == [3, -3, 4, 1]
    floats = pa.array([2.5, -2.5, 3.5, 2.7])
    assert cast_as_duckdb(floats, pa.int64()).to_pylist() == duckdb_cast(floats, "BIGINT") == [2, -2, 4, 3]


@pytest.mark.parametrize(
    ("values", "target", "name"),
    [
        ([1.0, float("nan")], pa.int32(), "INTEGER"),
        ([1.0, float("inf")], pa.int64(), "BIGINT"),
        ([1.0, 1e300], pa.float32(), "FLOAT"),
        ([40000.4], pa.int16(), "SMALLINT"),
    ],
    ids=["nan", "infinity", "beyond-float", "overflow"],
)
def test_values_that_do_not_fit_fail_as_in_duckdb(values: list[float], target: pa.DataType, name: str) -> None:
    array = pa.array(values)
    assert duckdb_cast(array, name) == "error"
    with pytest.raises(pa.ArrowInvalid):
        cast_as_duckdb(array, target)


def test_infinities_and_nan_stay_in_float() -> None:
    array = pa.array([float("inf"), float("-inf"), float("nan"), None])
    assert same(ours(array, pa.float32()), duckdb_cast(array, "FLOAT"))


TEXT_CASES = [
    (pa.array([" 42 ", "4.2", "-4.5", "7"]), pa.int32(), "INTEGER"),
    (pa.array(["yes", "t", "FALSE", "0", "n"]), pa.bool_(), "BOOLEAN"),
    (pa.array(["2026-01-02 03:04:05.1234567", "2026-01-02"]), pa.timestamp("us"), "TIMESTAMP"),
    (pa.array(["1e3", " 2.5 ", "-0"]), pa.float64(), "DOUBLE"),
    (pa.array(["1.005", "-1.005"]), pa.decimal128(10, 2), "DECIMAL(10, 2)"),
    (pa.array([1.5e-7, 123456789.0, -0.0, 1e16, float("nan")]), pa.string(), "VARCHAR"),
    (pa.array([1.5e-7, 123456789.0, 0.1], pa.float32()), pa.string(), "VARCHAR"),
    (pa.array([dt.datetime(2026, 1, 2, 3, 4, 5, 500000), dt.datetime(2026, 1, 2)]), pa.string(), "VARCHAR"),
    (pa.array([[1, 2], [], None]), pa.string(), "VARCHAR"),
    (pa.array([{"a": 1, "b": "x"}]), pa.string(), "VARCHAR"),
    (pa.array([True, False]), pa.string(), "VARCHAR"),
    (pa.array([Decimal("1.50")]), pa.string(), "VARCHAR"),
]


@pytest.mark.parametrize(("array", "target", "name"), TEXT_CASES, ids=[f"{c[0].type}-{c[2]}" for c in TEXT_CASES])
def test_text_is_parsed_and_printed_as_duckdb_does(array: pa.Array, target: pa.DataType, name: str) -> None:
    assert same(ours(array, target), duckdb_cast(array, name))


OTHER_CASES = [
    # pyarrow has no decimal-to-boolean cast: DuckDB's is "not zero"
    (
        pa.array([Decimal("611145985940.9043881768"), Decimal("0"), Decimal("-0.5"), None], pa.decimal128(22, 10)),
        pa.bool_(),
        "BOOLEAN",
    ),
    (pa.array([2.5, 0.0, -0.0, float("nan"), None]), pa.bool_(), "BOOLEAN"),
    # integers a float cannot hold exactly: DuckDB takes the nearest, pyarrow refused them
    (pa.array([979483675, 16777217, -263, None], pa.int32()), pa.float32(), "FLOAT"),
    (pa.array([9007199254740993, -(2**63)], pa.int64()), pa.float64(), "DOUBLE"),
    # nested values whose elements change type: pyarrow refuses to drop a digit, DuckDB rounds
    (
        pa.array([[Decimal("2.5"), Decimal("-1.5")], None], pa.list_(pa.decimal128(2, 1))),
        pa.list_(pa.int32()),
        "INTEGER[]",
    ),
    (pa.array(["[3, 4]", "[]", None]), pa.list_(pa.int32()), "INTEGER[]"),
    (
        pa.array([{"a": Decimal("2.5")}], pa.struct([("a", pa.decimal128(2, 1))])),
        pa.struct([("a", pa.int32())]),
        "STRUCT(a INTEGER)",
    ),
]


@pytest.mark.parametrize(("array", "target", "name"), OTHER_CASES, ids=[f"{c[0].type}-{c[2]}" for c in OTHER_CASES])
def test_booleans_and_nested_values_are_cast_as_duckdb_does(array: pa.Array, target: pa.DataType, name: str) -> None:
    assert same(ours(array, target), duckdb_cast(array, name))


def test_text_that_is_no_number_fails_naming_the_value() -> None:
    with pytest.raises(pa.ArrowInvalid, match="abc"):
        cast_as_duckdb(pa.array(["1", "abc"]), pa.int32())


def test_without_duckdb_text_goes_through_pyarrow(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_duckdb(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "duckdb":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_duckdb)
    assert implicit_casts.cast_as_duckdb(pa.array(["7"]), pa.int32()).to_pylist() == [7]


def test_chunked_arrays_keep_their_chunks() -> None:
    chunked = pa.chunked_array([[Decimal("1.25")], [Decimal("2.75"), None]], pa.decimal128(3, 2))
    result = cast_as_duckdb(chunked, pa.decimal128(3, 1))
    assert result.num_chunks == 2 and result.to_pylist() == [Decimal("1.3"), Decimal("2.8"), None]


def random_floats(rng: random.Random, count: int) -> list[float | None]:
    """Doubles of every magnitude DuckDB's double-precision product rounds visibly, ties included."""
    values: list[float | None] = [0.125, -0.125, 2.675, 0.375, -2.5, 1e20, -267139128129.22836, 0.1, None]
    for _ in range(count):
        magnitude = 10 ** rng.uniform(-6, 20)
        values.append(rng.choice([1, -1]) * magnitude)
        values.append(rng.randint(-(10**6), 10**6) / rng.choice([8, 100, 1000]))  # ties and short decimals
    return values


@pytest.mark.parametrize(("precision", "scale"), [(4, 1), (10, 2), (18, 3), (20, 15), (38, 10), (38, 0), (38, 30)])
@pytest.mark.parametrize("source", [pa.float64(), pa.float32()], ids=["DOUBLE", "FLOAT"])
def test_floats_to_decimals_as_duckdb(precision: int, scale: int, source: pa.DataType) -> None:
    """One value at a time: a value that does not fit fails the whole cast, in DuckDB as here."""
    rng = random.Random(precision * 100 + scale)
    target = pa.decimal128(precision, scale)
    for value in random_floats(rng, 40):
        array = pa.array([value], source)
        theirs = duckdb_cast(array, f"DECIMAL({precision}, {scale})")
        assert ours(array, target) == theirs, f"{array[0].as_py()!r} ({source}) to DECIMAL({precision}, {scale})"
