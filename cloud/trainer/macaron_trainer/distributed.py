"""Device choice and torchrun (DistributedDataParallel) setup.

Under torchrun (WORLD_SIZE > 1) every rank reads the same data and base, takes its share of
each global batch, and DDP sums gradients; gloo on CPU, nccl on CUDA. Only rank 0 prints
events and writes files.
"""

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from .errors import TrainerError
from .events import set_rank


@dataclass
class Dist:
    rank: int
    world: int
    local_rank: int
    device: torch.device

    @property
    def is_main(self):
        return self.rank == 0

    @property
    def active(self):
        return self.world > 1

    def all_sum(self, values):
        """Sums a list of floats over the ranks (a no-op on one process)."""
        if not self.active:
            return list(values)
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        return t.tolist()

    def broadcast(self, obj):
        """Rank 0's object on every rank."""
        if not self.active:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def close(self):
        if self.active and dist.is_initialized():
            dist.destroy_process_group()


def _device(choice, local_rank):
    if choice == "auto":
        if torch.cuda.is_available():
            choice = "cuda"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            choice = "mps"
        else:
            choice = "cpu"
    if choice == "cuda":
        if not torch.cuda.is_available():
            raise TrainerError("bad_args", "--device cuda: this torch build sees no CUDA device")
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    if choice == "mps":
        if getattr(torch.backends, "mps", None) is None or not torch.backends.mps.is_available():
            raise TrainerError("bad_args", "--device mps: MPS is not available")
        return torch.device("mps")
    return torch.device("cpu")


def init_distributed(device_choice):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    set_rank(rank)
    device = _device(device_choice, local_rank)
    if world > 1:
        if device.type == "mps":
            raise TrainerError("bad_args", "multi-process training is not supported on MPS")
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return Dist(rank, world, local_rank, device)
