"""The trainer ends when the process that started it is gone.

The app, `npm run train` or `npm run cycle` start the trainer and read its events. When that
process dies (killed, crashed), nobody reads them any more, yet a trainer left running would
hold both cores for minutes. `MACARON_PARENT_PID` names that process: a daemon thread checks
once a second that it is still alive and otherwise ends the trainer at once (its last
checkpoint stays, so a rerun resumes). Under torchrun every rank watches the same process.
"""

import os
import threading
import time

ENV = "MACARON_PARENT_PID"
EXIT_CODE = 143  # as if terminated


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch_parent(env=None, interval=1.0):
    """Starts the watch when the environment names a parent; returns whether it did."""
    text = (env if env is not None else os.environ).get(ENV, "")
    if not text.isdigit():
        return False
    pid = int(text)

    def run():
        while _alive(pid):
            time.sleep(interval)
        os._exit(EXIT_CODE)

    threading.Thread(target=run, name="macaron-parent-watch", daemon=True).start()
    return True
