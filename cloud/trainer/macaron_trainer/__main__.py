"""Entry point: `python -m macaron_trainer train|pretrain|logits ...` (see README.md)."""

import sys
import traceback

from .errors import TrainerError
from .events import emit_error
from .parent_watch import watch_parent


def main(argv):
    watch_parent()
    try:
        from .cli import parse_args

        args = parse_args(argv)
        if args.command == "logits":
            from .logits import run_logits

            run_logits(args)
        elif args.command == "train":
            from .train import run_train

            run_train(args)
        else:
            from .pretrain import run_pretrain

            run_pretrain(args)
        return 0
    except TrainerError as err:
        emit_error(err.code, err.message)
        return err.exit_code
    except KeyboardInterrupt:
        emit_error("internal", "interrupted")
        return 1
    except Exception as err:  # noqa: BLE001 - every failure must end as an error event
        traceback.print_exc(file=sys.stderr)
        emit_error("internal", f"{type(err).__name__}: {err}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
