"""The one exception a tool raises: its text goes back to the model as an error result."""


class ToolFailure(Exception):
    """A tool call that did not work; the message says what failed and what to do instead."""
