"""The one exception type user input errors raise, so front ends can report them cleanly."""


class PlacementError(ValueError):
    """Invalid user input: the message says what was wrong and what is accepted."""
