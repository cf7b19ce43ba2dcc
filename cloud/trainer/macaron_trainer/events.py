"""Machine-readable events (one JSON object per line on stdout) and human log lines (stderr).

Under torchrun only rank 0 speaks; `set_rank` is called once distributed setup is known.
"""

import json
import math
import sys

_rank = 0


def set_rank(rank):
    global _rank
    _rank = rank


def _clean(value):
    # JSON has no NaN/Infinity; a non-finite loss is reported as null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def emit(event, **fields):
    """Prints {"event": event, ...fields} on stdout (rank 0 only)."""
    if _rank != 0:
        return
    sys.stdout.write(json.dumps(_clean({"event": event, **fields}), separators=(",", ":")) + "\n")
    sys.stdout.flush()


def emit_error(code, message):
    """The error event on rank 0; other ranks only log it (every rank fails the same way)."""
    if _rank != 0:
        sys.stderr.write(f"[macaron_trainer rank {_rank}] error {code}: {message}\n")
        return
    emit("error", code=code, message=message)


def log(message):
    """A human-readable line on stderr (rank 0 only)."""
    if _rank == 0:
        sys.stderr.write(f"[macaron_trainer] {message}\n")
        sys.stderr.flush()
