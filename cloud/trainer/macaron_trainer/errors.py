"""The trainer's error type: a code from the CLI spec and a human-readable message."""

CODES = (
    "bad_base",
    "bad_data",
    "empty_data",
    "bad_parent",
    "nan_loss",
    "disk_full",
    "bad_args",
    "internal",
)


class TrainerError(Exception):
    """An expected failure, reported as {"event":"error","code":...} and exit code 1 (2: bad_args)."""

    def __init__(self, code, message):
        assert code in CODES, code
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def exit_code(self):
        return 2 if self.code == "bad_args" else 1
