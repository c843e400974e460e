"""Helpers shared by the tests (as pre-commit's `testing/`): `testing.git`, real git in temporary
directories that never reads or writes this machine's git configuration."""
