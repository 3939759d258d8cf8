"""DuckDB's ``upper`` and ``lower`` in Spark SQL (pure: sqlglot only).

DuckDB maps each character to one character (Unicode's simple case mapping); Spark, through Java, applies the
full mapping, which turns some characters into several and looks at a character's neighbours:

==================  ==========================  =====================
text                DuckDB                      Spark
==================  ==========================  =====================
``upper('straße')``  ``STRAẞE``                   ``STRASSE``
``upper('ﬁ')``       ``ﬁ`` (no simple mapping)    ``FI``
``lower('ΟΔΟΣ')``    ``οδοσ``                     ``οδος`` (final sigma)
``lower('İ')``       ``i``                        ``i̇`` (two characters)
==================  ==========================  =====================

A string holding none of those characters (nearly all) keeps Spark's own function, which then agrees with DuckDB's;
one that holds any is mapped character by character, the special ones as DuckDB maps them. The special characters
are the 102 that Unicode's full uppercase mapping expands (Python's ``len(c.upper()) > 1``), DuckDB 1.5.5's
``upper`` of each taken from DuckDB itself; for ``lower``, ``İ`` and the sigma.
"""

from __future__ import annotations

from sqlglot import exp

from airflow_provider_lakehouse.spark.rewriting import spark_expression

#: the characters whose full uppercase mapping expands, as a regex class (Java's)
_UPPER_SPECIAL = "[ßŉǰΐΰևẖ-ẚὐὒὔὖᾀ-ᾯᾲ-ᾴᾶᾷᾼῂ-ῄῆῇῌῒΐῖῗῢ-ῤῦῧῲ-ῴῶῷῼﬀ-ﬆﬓ-ﬗ]"
#: DuckDB's uppercase of those it changes (the others it keeps): ß -> ẞ, Greek with ypogegrammeni to prosgegrammeni
_UPPER_FROM = "ßᾀᾁᾂᾃᾄᾅᾆᾇᾐᾑᾒᾓᾔᾕᾖᾗᾠᾡᾢᾣᾤᾥᾦᾧᾳῃῳ"
_UPPER_TO = "ẞᾈᾉᾊᾋᾌᾍᾎᾏᾘᾙᾚᾛᾜᾝᾞᾟᾨᾩᾪᾫᾬᾭᾮᾯᾼῌῼ"
_LOWER_SPECIAL = "[İΣ]"

#: one character of a string at a time (``.`` in Java's regex is one code point, a surrogate pair included)
_CHARACTERS = "REGEXP_EXTRACT_ALL(_s, '(?s)(.)', 1)"


def duckdb_upper(node: exp.Upper) -> exp.Expr:
    """``upper(s)`` as DuckDB computes it.

    >>> import sqlglot
    >>> duckdb_upper(sqlglot.parse_one("upper(s)")).sql("spark").startswith("CAST(CASE WHEN s RLIKE '[ßŉ")
    True
    """
    per_character = (
        f"ARRAY_JOIN(TRANSFORM({_CHARACTERS}, _c -> CASE WHEN _c RLIKE '{_UPPER_SPECIAL}' "
        f"THEN TRANSLATE(_c, '{_UPPER_FROM}', '{_UPPER_TO}') ELSE UPPER(_c) END), '')"
    )
    return _by_character_if(node.this, _UPPER_SPECIAL, per_character, "UPPER(_s)")


def duckdb_lower(node: exp.Lower) -> exp.Expr:
    """``lower(s)`` as DuckDB computes it: ``İ`` is ``i``, and every capital sigma a small sigma, final or not."""
    per_character = f"ARRAY_JOIN(TRANSFORM({_CHARACTERS}, _c -> CASE WHEN _c = 'İ' THEN 'i' ELSE LOWER(_c) END), '')"
    return _by_character_if(node.this, _LOWER_SPECIAL, per_character, "LOWER(_s)")


def _by_character_if(value: exp.Expr, special: str, per_character: str, whole: str) -> exp.Expr:
    # The cast is no work for Spark (the CASE is a string already); it types the expression for the typed rewrites
    # around it (``upper(s)[2]`` indexes a string), which cannot type ARRAY_JOIN. _s appears three times: Spark
    # evaluates a projection's common subexpressions once.
    return spark_expression(
        f"CAST(CASE WHEN _s RLIKE '{special}' THEN {per_character} ELSE {whole} END AS STRING)", _s=value
    )
