"""Resumable checkpoints: trainable weights, optimizer state, step, RNG state and run history,
tagged with a hash of the run's configuration and data. Written atomically (temp + rename);
only the newest is kept; a checkpoint with another hash is ignored (and said so on stderr)."""

import hashlib
import io
import json
import os
import re

import torch

from .events import log
from .storage import atomic_write

_NAME = re.compile(r"^step-(\d{8})\.pt$")
# What a write killed half-way leaves (storage.atomic_write's temp file).
_TEMP = re.compile(r"^\.step-\d{8}\.pt\.\d+\.tmp$")


def config_hash(config):
    """sha256 of the canonical JSON of everything that determines the run's result."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Checkpoints:
    def __init__(self, directory, hash_):
        self.directory = directory
        self.hash = hash_

    def _files(self):
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        found = [(int(m.group(1)), n) for n in names if (m := _NAME.match(n))]
        return [os.path.join(self.directory, n) for _, n in sorted(found, reverse=True)]

    def latest(self):
        """The newest checkpoint state of this run, or None."""
        for path in self._files():
            try:
                state = torch.load(path, map_location="cpu")
            except Exception as err:  # noqa: BLE001 - a damaged file is skipped, not fatal
                log(f"ignoring unreadable checkpoint {path}: {err}")
                continue
            if state.get("configHash") != self.hash:
                log(f"ignoring checkpoint {path}: it belongs to another run (config hash differs)")
                continue
            return state
        return None

    def save(self, step, state):
        buffer = io.BytesIO()
        torch.save({**state, "configHash": self.hash, "step": step}, buffer)
        path = os.path.join(self.directory, f"step-{step:08d}.pt")
        atomic_write(path, [buffer.getvalue()])
        for old in self._files():
            if old != path:
                os.remove(old)
        return path

    def remove_all(self):
        for path in self._files():
            os.remove(path)
        try:
            temps = [n for n in os.listdir(self.directory) if _TEMP.match(n)]
        except FileNotFoundError:
            temps = []
        for name in temps:
            os.remove(os.path.join(self.directory, name))
        try:
            os.rmdir(self.directory)
        except OSError:
            pass  # not empty (someone else's files) or already gone
