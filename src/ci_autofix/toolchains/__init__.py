"""The repository's runtimes (Node, Go, Rust) at the versions the failed job and the repository declare,
fetched by us from fixed sources, checked against the publisher's checksums, read-only to the sandbox.

`provision(root, job, dest=...)` is the entry; `deps` gives the dependency install commands CI runs.
"""
