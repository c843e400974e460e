"""What ci-autofix remembers between runs, kept on GitHub: the suggestion record in a PR body, the
side-branch names, the provenance status on the fix commit, and the attempts they add up to."""
