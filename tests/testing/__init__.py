"""Helpers shared by the tests (as pre-commit's `testing/`): `testing.git`, real git in temporary
directories that never reads or writes this machine's git configuration; `testing.toolchain_mirror`,
real Node, Go and Rust archives in their publishers' formats served on 127.0.0.1."""
