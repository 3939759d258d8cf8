"""DuckDB's ``strftime`` on Spark.

sqlglot turns ``strftime(ts, '%Y-%m-%d')`` into Spark's ``DATE_FORMAT(ts, 'yyyy-MM-dd')`` by swapping each
specifier for a pattern letter, and leaves what it does not know as it is. Spark then reads the rest of the
format as pattern letters too: ``'Date: %Y'`` prints the day of the year for ``D``, week-based specifiers
(``%U``, ``%W``, ``%w``, ``%u``, ``%V``, ``%G``) fail, ``%j`` loses its third digit and ``%%`` stays two percent
signs. Here a literal format is read as DuckDB reads it and written as Spark text that computes the same
characters: literal text quoted, what ``DATE_FORMAT`` prints as DuckDB does as pattern letters, the rest as
arithmetic on the date parts.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import literal_text, spark_expression

#: specifiers ``DATE_FORMAT`` prints exactly as DuckDB does (names in English, numbers zero-padded alike)
_PATTERNS = {
    "a": "EEE",
    "A": "EEEE",
    "b": "MMM",
    "h": "MMM",
    "B": "MMMM",
    "d": "dd",
    "-d": "d",
    "m": "MM",
    "-m": "M",
    "H": "HH",
    "-H": "H",
    "I": "hh",
    "-I": "h",
    "M": "mm",
    "-M": "m",
    "S": "ss",
    "-S": "s",
    "p": "a",
    "j": "DDD",
    "-j": "D",
    "g": "SSS",
    "f": "SSSSSS",
    "n": "SSSSSS",
}
#: text DuckDB prints after a specifier's pattern letters: nanoseconds of a microsecond timestamp end in 000
_PATTERN_SUFFIXES = {"n": "000"}

#: specifiers computed from date parts (``_x`` is the value), as DuckDB 1.5 prints them
_EXPRESSIONS = {
    # years: four digits from 0 to 9999, otherwise as many as the year has (and its sign)
    "Y": "CASE WHEN YEAR(_x) BETWEEN 0 AND 9999 THEN LPAD(CAST(YEAR(_x) AS STRING), 4, '0') "
    "ELSE CAST(YEAR(_x) AS STRING) END",
    "y": "LPAD(CAST(ABS(YEAR(_x)) % 100 AS STRING), 2, '0')",
    "-y": "CAST(ABS(YEAR(_x)) % 100 AS STRING)",
    # the ISO 8601 week-numbering year, always four digits in DuckDB (12345 prints 2345)
    "G": "LPAD(CAST(PMOD(EXTRACT(YEAROFWEEK FROM _x), 10000) AS STRING), 4, '0')",
    "V": "LPAD(CAST(WEEKOFYEAR(_x) AS STRING), 2, '0')",
    "u": "CAST(EXTRACT(DAYOFWEEK_ISO FROM _x) AS STRING)",
    "w": "CAST(DAYOFWEEK(_x) - 1 AS STRING)",
    # weeks of the year starting on Sunday (%U) or Monday (%W); days before the first such day are week 0
    "U": "LPAD(CAST((DAYOFYEAR(_x) + 7 - DAYOFWEEK(_x)) DIV 7 AS STRING), 2, '0')",
    "W": "LPAD(CAST((DAYOFYEAR(_x) + 6 - (DAYOFWEEK(_x) + 5) % 7) DIV 7 AS STRING), 2, '0')",
    # the zone's name: none for a DATE or TIMESTAMP; the session's for a TIMESTAMPTZ (Spark's TIMESTAMP), which
    # DuckDB names after its TimeZone setting and Spark after spark.sql.session.timeZone (UTC unless the lake's
    # spark_conf sets it; DuckDB spells the machine's UTC Etc/UTC)
    "Z": "CASE WHEN _x IS NULL THEN NULL WHEN TYPEOF(_x) = 'timestamp' THEN CURRENT_TIMEZONE() ELSE '' END",
}

#: specifiers that stand for others
_COMPOSITES = {"c": "%Y-%m-%d %H:%M:%S", "x": "%Y-%m-%d", "X": "%H:%M:%S", "T": "%H:%M:%S"}

#: specifiers that print the same characters for every value of a session in UTC (the offset of a TIMESTAMP, or
#: of a TIMESTAMPTZ in UTC, is ``+00``)
_CONSTANTS = {"z": "+00", "%": "%"}


@dataclass(frozen=True)
class Specifier:
    """One ``%`` specifier of a format, without its ``%`` (``Y``, ``-d``)."""

    name: str


@dataclass(frozen=True)
class FormatError(ValueError):
    """A format DuckDB refuses; ``message`` is DuckDB's."""

    message: str

    def __str__(self) -> str:
        return self.message


def parse_format(text: str) -> list[str | Specifier]:
    """``text`` as DuckDB's ``strftime`` reads it: literal text and specifiers, in order.

    >>> parse_format("%Y-%-m, %% %c")
    [Specifier(name='Y'), '-', Specifier(name='-m'), ', % ', Specifier(name='Y'), '-', Specifier(name='m'), \
'-', Specifier(name='d'), ' ', Specifier(name='H'), ':', Specifier(name='M'), ':', Specifier(name='S')]
    >>> parse_format("%e")
    Traceback (most recent call last):
    ...
    airflow_provider_lakehouse.spark.strftime.FormatError: Invalid Input Error: Failed to parse format \
specifier %e: Unrecognized format for strftime/strptime: %e

    :raises FormatError: with DuckDB's message, for a specifier DuckDB does not know, a trailing ``%`` or an empty
        format.
    """
    if not text:
        raise _format_error(text, "Empty format string")
    parts: list[str | Specifier] = []
    literal = ""
    index = 0
    while index < len(text):
        char = text[index]
        if char != "%":
            literal += char
            index += 1
            continue
        name = text[index + 1 : index + 3] if text[index + 1 : index + 2] == "-" else text[index + 1 : index + 2]
        if not name:
            raise _format_error(text, "Trailing format character %")
        index += 1 + len(name)
        if name in _CONSTANTS:
            literal += _CONSTANTS[name]
            continue
        if name in _COMPOSITES:
            if literal:
                parts.append(literal)
                literal = ""
            parts += parse_format(_COMPOSITES[name])
            continue
        if name not in _PATTERNS and name not in _EXPRESSIONS:
            raise _format_error(text, f"Unrecognized format for strftime/strptime: %{name}")
        if literal:
            parts.append(literal)
            literal = ""
        parts.append(Specifier(name))
    if literal:
        parts.append(literal)
    return parts


def _format_error(text: str, reason: str) -> FormatError:
    return FormatError(f"Invalid Input Error: Failed to parse format specifier {text}: {reason}")


def duckdb_strftime(node: exp.TimeToStr) -> exp.Expr | None:
    """``strftime(value, format)`` (either argument first, as DuckDB takes them) with a literal format, as Spark
    text that prints what DuckDB prints; None (sqlglot's translation stays) for a format that is not a literal,
    and for one DuckDB refuses (see :func:`format_error`).

    >>> import sqlglot
    >>> def spark(sql):
    ...     return duckdb_strftime(sqlglot.parse_one(sql, read="duckdb").selects[0]).sql("spark")
    >>> spark("SELECT strftime(d, 'Week %U of %Y')")
    "CONCAT('Week ', LPAD(CAST((DAYOFYEAR(d) + 7 - DAYOFWEEK(d)) DIV 7 AS STRING), 2, '0'), ' of ', \
CASE WHEN YEAR(d) BETWEEN 0 AND 9999 THEN LPAD(CAST(YEAR(d) AS STRING), 4, '0') ELSE CAST(YEAR(d) AS STRING) END)"
    >>> print(spark("SELECT strftime('%d.%m. %I %p', ts)"))
    DATE_FORMAT(ts, 'dd\\'.\\'MM\\'. \\'hh\\' \\'a')
    """
    value, text = _value_and_format(node)
    if text is None:
        return None
    try:
        parts = parse_format(text)
    except FormatError:
        return None  # the planner fails the statement with DuckDB's error (format_error)
    pieces: list[exp.Expr] = []
    group: list[str | Specifier] = []  # literal text and pattern letters one DATE_FORMAT prints
    for part in parts:
        if isinstance(part, Specifier) and part.name in _EXPRESSIONS:
            pieces += _printed(value, group)
            group = []
            pieces.append(spark_expression(_EXPRESSIONS[part.name], _x=value))
        else:
            group.append(part)
    pieces += _printed(value, group)
    if all(isinstance(p, exp.Literal) for p in pieces):  # only text: the text, NULL for NULL as in DuckDB
        constant = "".join(p.name for p in pieces)
        return spark_expression(
            "CASE WHEN _x IS NULL THEN NULL ELSE _text END", _x=value, _text=exp.Literal.string(constant)
        )
    return pieces[0] if len(pieces) == 1 else exp.Anonymous(this="CONCAT", expressions=pieces)


def format_error(tree: exp.Expr, text: str) -> str | None:
    """DuckDB's error for the first literal ``strftime`` format in ``tree`` (statement ``text`` parsed) DuckDB
    refuses: DuckDB fails the statement before running it, whether or not rows reach the call. None when there
    is none.

    >>> import sqlglot
    >>> sql = "SELECT strftime(d, 'x%') FROM t"
    >>> format_error(sqlglot.parse_one(sql, read="duckdb"), sql)
    'Invalid Input Error: Failed to parse format specifier x%: Trailing format character %'
    """
    for node in tree.find_all(exp.TimeToStr):
        format_text = _value_and_format(node)[1]
        if format_text == "None" and not _has_string(text, "None"):
            format_text = ""  # sqlglot reads an empty format as the text 'None'
        if format_text is None:
            continue
        try:
            parse_format(format_text)
        except FormatError as exc:
            return exc.message
    return None


def _value_and_format(node: exp.TimeToStr) -> tuple[exp.Expr, str | None]:
    """The value ``strftime`` formats and its literal format (None when the format is no literal); DuckDB takes
    the two either way round (``strftime('%Y', d)``)."""
    value, format_node = node.this, node.args.get("format")
    text = literal_text(format_node)
    if text is None and format_node is not None and literal_text(value) is not None:
        return format_node, literal_text(value)
    return value, text


def _has_string(text: str, value: str) -> bool:
    """Whether DuckDB SQL ``text`` holds the string literal ``value``."""
    from sqlglot.dialects.duckdb import DuckDB
    from sqlglot.tokens import TokenType

    return any(t.token_type == TokenType.STRING and t.text == value for t in DuckDB().tokenize(text))


def _printed(value: exp.Expr, group: list[str | Specifier]) -> list[exp.Expr]:
    """What prints ``group``: its text alone, or one ``DATE_FORMAT`` with the text quoted between the letters."""
    if not group:
        return []
    if all(isinstance(p, str) for p in group):
        return [exp.Literal.string("".join(p for p in group if isinstance(p, str)))]
    pattern, text = "", ""
    for part in group:
        if isinstance(part, str):
            text += part
            continue
        pattern += _quoted(text) + _PATTERNS[part.name]
        text = _PATTERN_SUFFIXES.get(part.name, "")
    return [exp.Anonymous(this="DATE_FORMAT", expressions=[value.copy(), exp.Literal.string(pattern + _quoted(text))])]


def _quoted(text: str) -> str:
    """Literal text in a Spark datetime pattern: quoted, a quote doubled ('' for no text)."""
    return "'" + text.replace("'", "''") + "'" if text else ""
