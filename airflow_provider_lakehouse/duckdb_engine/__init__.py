"""DuckDB as a second engine on the same lakes: a planned script runs in-process with DuckDB and its ``ducklake``
extension (see :mod:`.runner`); the extensions load offline from their wheels (see :mod:`.session`)."""
