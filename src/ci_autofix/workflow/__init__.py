"""The failed run, as GitHub and the workflow file describe it: its failed jobs and logs, the failed
steps and their commands, the job's setup, and the tool versions its workflow pins.

`definition` is the one reader of workflow files (YAML, from git objects at the failing commit);
`failed_run` asks GitHub for the failed jobs, streams their logs and reads their annotations;
`tools` reads the formatter versions a workflow installs. Commands come from here, never from a log.
"""
