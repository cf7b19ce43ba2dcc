"""Atomic file writes (temp file beside the target, fsync, rename) with disk-full detection.

A full disk raises TrainerError("disk_full") and leaves no partial file behind. Tests cannot
always fill a real disk, so MACARON_TRAINER_FAKE_ENOSPC=<substring> makes writes to paths
containing that substring fail with ENOSPC (a test-only hook; unset in normal use).
"""

import errno
import hashlib
import os

from .errors import TrainerError


def _check_fake_enospc(path):
    marker = os.environ.get("MACARON_TRAINER_FAKE_ENOSPC")
    if marker and marker in os.path.abspath(path):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


def atomic_write(path, chunks):
    """Writes an iterable of bytes chunks to `path` atomically."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        os.makedirs(directory, exist_ok=True)
        with open(tmp, "wb") as f:
            _check_fake_enospc(path)
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:
        try:
            os.remove(tmp)
        except OSError:
            pass
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise TrainerError("disk_full", f"no space left on the device writing {path}") from err
        raise


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
