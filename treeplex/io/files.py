"""Output files: paths checked before any work, and atomic replacement for checkpoints."""

from __future__ import annotations

import glob
import os

from ..errors import InputError


def check_output(path: str, what: str, inputs: dict | None = None, regular: bool = False) -> None:
    """Refuse, before any solving, an output ``path`` that cannot be written: a missing or
    unwritable directory, a directory, one of the run's other files (``inputs``: {path: what it
    is}, e.g. the game file), and with ``regular`` (files replaced by rename) anything but a
    regular file."""
    if not path:
        raise InputError(f"{what}: empty file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{what} {path}: no such directory {folder}")
    if os.path.isdir(path):
        raise InputError(f"{what} {path} is a directory")
    if regular and os.path.islink(path):
        raise InputError(f"{what} {path} is a symbolic link; give the file it points to")
    if regular and os.path.exists(path) and not os.path.isfile(path):
        raise InputError(f"{what} {path} is not a regular file")
    for source, name in (inputs or {}).items():
        if not source:
            continue
        if os.path.abspath(path) == os.path.abspath(source) or (
                os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source)):
            raise InputError(f"{what} {path} is {name}; it would be overwritten")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise InputError(f"{what} {path}: permission denied")


def atomic_write(path: str, write) -> None:
    """Call ``write(f)`` on a new temporary file beside ``path`` (unique name, this process's
    id in it), fsync it, and rename it over ``path``; on failure the temporary is removed and
    ``path`` is untouched."""
    check_output(path, "output file", regular=True)
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile  # (its import pulls in shutil, bz2, lzma and random: start-up)

    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f"{os.path.basename(path)}.{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def remove_stale_temporaries(path: str) -> None:
    """Remove the temporaries of :func:`atomic_write` for ``path`` left by processes that are
    gone (killed while writing), and the fixed ``path + ".tmp"`` of older versions."""
    for tmp in glob.glob(glob.escape(path) + ".*.tmp") + glob.glob(glob.escape(path) + ".tmp"):
        pid = tmp[len(path) + 1:].split(".")[0]
        if pid.isdigit() and _alive(int(pid)):
            continue
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True
