"""Error types. ``InputError`` means the user's input is wrong; the message says where."""


class InputError(ValueError):
    """Bad user input (game file, parameters, ranges, options). CLI exit code 2."""


class GameError(InputError):
    """Bad game input. The message names the problem and where it is."""
