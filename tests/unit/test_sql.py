"""Statement splitting and $-parameter validation/binding (pure)."""

from __future__ import annotations

import pytest

from airflow_provider_lakehouse.exceptions import ParameterError
from airflow_provider_lakehouse.sql import bind_pyformat, placeholders_in, split_statements, validate_parameters


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("select 1; select 2", ["select 1", "select 2"]),
        ("select ';' as a; select 2;", ["select ';' as a", "select 2"]),
        ('select 1 as "a;b"', ['select 1 as "a;b"']),
        ("select 1 -- ; not a split\n; select 2", ["select 1 -- ; not a split", "select 2"]),
        ("select /* ; /* nested ; */ ; */ 1", ["select /* ; /* nested ; */ ; */ 1"]),
        (
            "create function f() returns int as $$ select 1; $$ language sql; select f()",
            ["create function f() returns int as $$ select 1; $$ language sql", "select f()"],
        ),
        ("select $tag$ a;b $tag$", ["select $tag$ a;b $tag$"]),
        ("select E'it\\'s;'; select 2", ["select E'it\\'s;'", "select 2"]),
        ("select 'it''s;'", ["select 'it''s;'"]),
        ("  ;; -- only a comment\n ; ", []),
        ("select 'open; select 2", ["select 'open; select 2"]),  # unterminated: the database will say
        ("select /* open; select 2", ["select /* open; select 2"]),
        ('select "a\\"; select 2', ['select "a\\"', "select 2"]),  # no backslash escapes in identifiers
        ("select e'\\\\'; select 2", ["select e'\\\\'", "select 2"]),  # an escaped backslash, then the quote
    ],
)
def test_split_statements(sql: str, expected: list[str]) -> None:
    assert [s.text for s in split_statements(sql)] == expected


def test_statement_indexes_are_one_based_and_skip_empty_pieces() -> None:
    statements = split_statements("select 1;; insert into t values (1)")
    assert [(s.index, s.kind) for s in statements] == [(1, "select"), (2, "insert")]


@pytest.mark.parametrize(
    ("sql", "read_only"),
    [
        ("SELECT 1", True),
        ("with x as (select 1) select * from x", True),
        ("with x as (delete from t returning *) select * from x", False),
        ("insert into t values (1)", False),
        ("(select 1)", True),
        ("create table t (a int)", False),
    ],
)
def test_read_only_detection(sql: str, read_only: bool) -> None:
    assert split_statements(sql)[0].is_read_only is read_only


def test_parameters_inside_literals_comments_and_dollar_quotes_are_not_placeholders() -> None:
    sql = "select '$1', \"$2\", $$ $3 $$, $q$ $4 $q$ -- $5\n, /* $6 */ $7, a$8, price::numeric"
    assert placeholders_in(split_statements(sql)) == ["7"]


def test_positional_parameters_must_all_be_used() -> None:
    statements = split_statements("select $1, $2")
    assert validate_parameters(statements, [10, "x"]) == {"1": 10, "2": "x"}
    with pytest.raises(ParameterError, match="Wrong parameter count"):
        validate_parameters(statements, [10])
    with pytest.raises(ParameterError, match="Wrong parameter count"):
        validate_parameters(statements, [10, 11, 12])


def test_gaps_in_positional_parameters_are_errors() -> None:
    with pytest.raises(ParameterError, match=r"\$1, \$3"):
        validate_parameters(split_statements("select $1, $3"), [1, 2, 3])


def test_named_parameters_must_match_exactly() -> None:
    statements = split_statements("select $who, $when; select $who")
    assert validate_parameters(statements, {"who": "a", "when": 1}) == {"who": "a", "when": 1}
    with pytest.raises(ParameterError, match=r"No value for parameter\(s\) \$when"):
        validate_parameters(statements, {"who": "a"})
    with pytest.raises(ParameterError, match=r"\$typo given but not used"):
        validate_parameters(statements, {"who": "a", "when": 1, "typo": 2})


def test_mixing_styles_is_an_error() -> None:
    with pytest.raises(ParameterError, match="pass parameters as a dict"):
        validate_parameters(split_statements("select $name"), ["x"])
    with pytest.raises(ParameterError, match="pass a list"):
        validate_parameters(split_statements("select $1"), {"a": 1})
    with pytest.raises(ParameterError, match="not a string"):
        validate_parameters(split_statements("select $1"), "x")


def test_no_parameters_needed_and_none_given() -> None:
    assert validate_parameters(split_statements("select 1"), None) == {}
    assert validate_parameters(split_statements("select 1"), []) == {}


def test_bind_pyformat_escapes_percent_everywhere_and_keeps_casts() -> None:
    statement = split_statements("select $1::int, '100%' as p, $name || '%' -- 5% off\n")[0]
    assert bind_pyformat(statement) == "select %(1)s::int, '100%%' as p, %(name)s || '%%' -- 5%% off"
