"""ci-autofix: turn a red GitHub Actions run into a verified, reviewed fix."""

__version__ = "0.1.0"
