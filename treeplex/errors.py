"""Error types. ``InputError`` means the user's input is wrong; the message says where."""


class InputError(ValueError):
    """Bad user input (game file, parameters, ranges, options). CLI exit code 2."""


class GameError(InputError):
    """Bad game input. The message names the problem and where it is."""


def nonnegative(v, what: str) -> float:
    """``float(v)``, or an :class:`InputError` saying that ``what`` must be a finite number >= 0."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        x = float("nan")
    if not (0.0 <= x < float("inf")):
        raise InputError(f"{what} must be a finite number >= 0, got {v!r}")
    return x
