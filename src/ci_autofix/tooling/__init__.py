"""The tools CI runs and at which versions: the formatter versions a workflow installs, version pins
read strictly, and the versions the failed job ran (its log, the locks, the index at the run's date).

`tools` reads the versions a workflow installs, `versions` parses and matches pins, `ci_versions`
finds what the failed job ran. Below `fixers` and `workflow`, which both ask it; it runs nothing.
"""
