"""The rule families. Each module has `check(files, limits) -> Iterator[Finding]`."""
