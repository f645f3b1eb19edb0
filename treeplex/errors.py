"""Error types (``InputError`` means the user's input is wrong; the message says where) and checks of input values."""

import argparse
import math
import os
import sys


class InputError(ValueError):
    """Bad user input (game file, parameters, ranges, options). CLI exit code 2."""


class WorkerLost(RuntimeError):
    """A worker process of a split solve died (killed, out of memory): CLI exit code 1, one line."""


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


def parse_json(text: str, where: str):
    """``json.loads(text)``, refusing bad JSON and non-finite numbers (``NaN``, ``1e999``) in one
    :class:`InputError` that names ``where``."""
    import json

    def finite(s):
        x = float(s)
        if not math.isfinite(x):
            raise ValueError(f"the number {s} is not finite")
        return x

    def constant(s):
        raise ValueError(f"the number {s} is not finite")

    try:
        return json.loads(text, parse_float=finite, parse_int=_finite_int, parse_constant=constant)
    except ValueError as e:
        raise InputError(f"{where}: bad JSON ({e})") from None
    except RecursionError:
        raise InputError(f"{where}: JSON nested too deeply") from None


def _finite_int(s: str) -> int:
    if len(s) > 300:  # float(x) of a larger int overflows: no payoff or weight is that big
        raise ValueError(f"the number {s[:20]}... is too large")
    return int(s)


def read_json(path: str, what: str = "file"):
    """:func:`parse_json` of a file; a missing or unreadable file is an :class:`InputError`."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read the {what}: {getattr(e, 'strerror', None) or e}") from None
    return parse_json(text, path)


def check_params(defaults: dict, params: dict, what: str) -> None:
    """Refuse ``params`` whose types do not fit the ``defaults`` of the same names: a bool
    default takes only true/false, a number default only a finite number (the receiver checks
    its own ranges). Names without a default here are left to the receiver."""
    for key, v in params.items():
        d = defaults.get(key)
        if isinstance(d, bool):
            if not isinstance(v, bool):
                raise InputError(f"{what}: {key} must be true or false, got {v!r}")
        elif isinstance(d, (int, float)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InputError(f"{what}: {key} must be a finite number, got {v!r}")


def defaults_of(func) -> dict:
    """{parameter: default} of a function or class (parameters without one are left out)."""
    import inspect

    return {n: p.default for n, p in inspect.signature(func).parameters.items() if p.default is not p.empty}


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and a pointer to --help), exit code 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def guarded(func, *args) -> int:
    """``func(*args)`` with every error as one line on stderr: exit 2 for bad input, 1 otherwise."""
    try:
        return func(*args)
    except (InputError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        print(f"treeplex: error: {e}", file=sys.stderr)
        return 2
    except MemoryError:
        print("treeplex: error: out of memory; the size estimate was too low for this machine: "
              "give a smaller --max-memory or a smaller game", file=sys.stderr)
        return 2
    except WorkerLost as e:
        print(f"treeplex: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("treeplex: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `treeplex solve leduc | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except Exception as e:  # noqa: BLE001 - last line of defence: one line, exit 1
        print(f"treeplex: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
