"""`python -m macaron_trainer.torchrun ...`: torchrun (same arguments) for torch < 2 on Python 3.11.

torch 1.13's launcher parses --redirects/--tee with `for s in Std`, which on Python 3.11 skips
the zero flag Std.NONE, so /usr/bin/torchrun fails before starting any worker ("'NoneType'
object has no attribute 'get'"; Debian bookworm's python3-torch). This parses them with
Std(int) and then runs torch.distributed.run's own main. Newer torch needs no fix.
"""

import re
import sys

from torch.distributed.elastic.multiprocessing import api


def _from_str(vm):
    if re.fullmatch(r"\d", vm):
        return api.Std(int(vm))
    if re.fullmatch(r"(\d:\d,)*\d:\d", vm):
        return {int(k): api.Std(int(v)) for k, v in (item.split(":") for item in vm.split(","))}
    raise ValueError(f"{vm} does not match: <0..3> or <local rank>:<0..3>,...")


def main():
    if list(api.Std) and api.Std.NONE not in list(api.Std) and api.Std.from_str("0") is None:
        api.Std.from_str = staticmethod(_from_str)
    from torch.distributed.run import main as torchrun_main

    sys.exit(torchrun_main())


if __name__ == "__main__":
    main()
