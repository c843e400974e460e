"""Delivery: the fix as a suggestion branch and PR (`suggestion`), the words of its PR body and the
job summary (`report`), and CI on a branch ci-autofix pushed (`ci`)."""
