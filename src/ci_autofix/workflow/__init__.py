"""The failed run, as GitHub and the workflow file describe it: its failed jobs and logs, the failed
steps and their commands (as the step really runs them: `replay`), and the job's setup.

`definition` is the one reader of workflow files (YAML, from git objects at the failing commit);
`failed_run` asks GitHub for the failed jobs, streams their logs and reads their annotations;
`replay` reads a step's wrappers, sessions and scripts through to the tools they run (with the
fixers' knowledge of those tools). The versions the tools ran at are `ci_autofix.tooling`'s.
Commands come from here, never from a log.
"""
