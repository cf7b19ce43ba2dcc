"""The tokenized JSONL datasets (see README.md): reading, validation, and batching into tensors.

Every line is checked (JSON, kind, integer ids inside the vocabulary, start range, length
within the context); the first bad line fails the run with bad_data naming the file and line.
"""

import json
import math
from dataclasses import dataclass

import torch

from .errors import TrainerError
from .storage import sha256_file

IGNORE = -100


@dataclass
class SeqExample:
    """SFT or language-modelling example: the loss covers predicting ids[start:].

    With ``spans`` ([from, to) ranges at or after start), only those tokens are predicted: an
    answer that called tools learns its calls and texts, not the tool results between them.
    """

    ids: list
    start: int
    spans: list = None

    @property
    def loss_tokens(self):
        if self.spans is not None:
            return sum(b - a for a, b in self.spans)
        return len(self.ids) - self.start

    def loss_ranges(self):
        return self.spans if self.spans is not None else [(self.start, len(self.ids))]


@dataclass
class PairExample:
    """A preference pair; ``chosen_spans``/``rejected_spans`` ([from, to) in the completion) leave
    tool results out of a side's log-probability, as ``spans`` do for SFT."""

    prompt: list
    chosen: list
    rejected: list
    chosen_spans: list = None
    rejected_spans: list = None

    @property
    def loss_tokens(self):
        return len(self.chosen) + len(self.rejected)


@dataclass
class GroupExample:
    """A prompt with K >= 2 sampled completions and their scalar rewards (GRPO).

    ``advantages`` are the group-relative rewards (r_i - mean) / (std + eps), all zero when the
    rewards are all equal (such a group carries no signal). With ``spans`` (one list per
    completion, [from, to) in the whole sequence), only those tokens count: completions that
    called tools learn their calls and texts, not the tool results between them.

    With a ``baseline`` (users' trajectories with nothing to be compared with in their group: a
    lone failure, a lone success, answers that all failed) the group may hold a single completion
    and A_i = r_i - baseline: the group has no mean or spread of its own, so the line states the
    reward it is measured against (cloud/prepare/groups.ts uses 0.5, halfway between a failure's 0
    and a success's 1). Not divided by a spread: one answer's verdict is weaker evidence than a
    contrast inside a group, and ±0.5 keeps it at half a contrasting pair's ±1.
    """

    prompt: list
    completions: list
    rewards: list
    spans: list = None
    baseline: float = None

    @property
    def advantages(self):
        if self.baseline is not None:
            return [r - self.baseline for r in self.rewards]
        return group_advantages(self.rewards)

    @property
    def has_signal(self):
        if self.baseline is not None:
            return any(r != self.baseline for r in self.rewards)
        return max(self.rewards) != min(self.rewards)

    @property
    def loss_tokens(self):
        if self.spans is not None:
            return sum(b - a for spans in self.spans for a, b in spans)
        return sum(len(c) for c in self.completions)


# Added to the group's reward standard deviation (population std) before dividing.
ADVANTAGE_EPS = 1e-4

# The largest |reward| a group may hold: the advantages' mean and variance of rewards near the
# float limit overflow (1e308 and -1e308) or become inf/nan (1.7e308 twice). Rewards are scores
# (the contract's pass/partial credit in [0, 1]), far inside this bound.
MAX_ABS_REWARD = 1e6


def group_advantages(rewards):
    """(r_i - mean) / (std + eps), std the population standard deviation; zeros for equal rewards."""
    if max(rewards) == min(rewards):
        return [0.0] * len(rewards)
    mean = sum(rewards) / len(rewards)
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    return [(r - mean) / (std + ADVANTAGE_EPS) for r in rewards]


def _example_tokens(e):
    if isinstance(e, SeqExample):
        return len(e.ids)
    if isinstance(e, GroupExample):
        return len(e.prompt) + sum(len(c) for c in e.completions)
    return len(e.prompt) + len(e.chosen) + len(e.rejected)


@dataclass
class Dataset:
    path: str
    sha256: str
    examples: list

    @property
    def tokens(self):
        """Every token id in the file."""
        return sum(_example_tokens(e) for e in self.examples)


def _ids(obj, key, where, vocab, min_len=1):
    value = obj.get(key)
    if not isinstance(value, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in value):
        raise TrainerError("bad_data", f"{where}: \"{key}\" must be a list of integers")
    if len(value) < min_len:
        raise TrainerError("bad_data", f"{where}: \"{key}\" needs at least {min_len} token(s)")
    for t in value:
        if t < 0 or t >= vocab:
            raise TrainerError(
                "bad_data", f"{where}: token id {t} in \"{key}\" is outside the vocabulary (0..{vocab - 1})"
            )
    return value


def _spans(obj, where, start, length):
    """Loss ranges: ascending, non-overlapping [from, to) pairs with start <= from < to <= length."""
    value = obj.get("spans")
    message = f"{where}: \"spans\" must be ascending [from, to) pairs within {start}..{length}"
    if not isinstance(value, list) or not value:
        raise TrainerError("bad_data", message)
    out, previous = [], start
    for pair in value:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
            or not previous <= pair[0] < pair[1] <= length
        ):
            raise TrainerError("bad_data", message)
        out.append((pair[0], pair[1]))
        previous = pair[1]
    return out


def _finite_reward(value, what, where):
    """A reward-scale number: finite, not a bool or a string, within MAX_ABS_REWARD."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TrainerError("bad_data", f"{where}: {what} ({value!r}) is not a finite number")
    if abs(value) > MAX_ABS_REWARD:
        message = f"{where}: {what} ({value!r}) is out of range: |reward| > {MAX_ABS_REWARD:g}"
        raise TrainerError("bad_data", message)
    return float(value)


def _group(obj, where, vocab):
    """A GRPO line: prompt, K >= 2 non-empty completions (K >= 1 with a baseline), K finite rewards."""
    prompt = _ids(obj, "prompt", where, vocab)
    baseline = _finite_reward(obj["baseline"], "baseline", where) if "baseline" in obj else None
    least = 1 if baseline is not None else 2
    completions = obj.get("completions")
    if not isinstance(completions, list) or len(completions) < least:
        got = len(completions) if isinstance(completions, list) else "none"
        plural = "completion" if least == 1 else "completions"
        message = f"{where}: a group needs \"completions\", at least {least} {plural} (got {got})"
        raise TrainerError("bad_data", message)
    parsed = [
        _ids({f"completions[{i}]": c}, f"completions[{i}]", where, vocab) for i, c in enumerate(completions)
    ]
    rewards = obj.get("rewards")
    if not isinstance(rewards, list) or len(rewards) != len(completions):
        message = f"{where}: \"rewards\" must be a list of {len(completions)} numbers, one per completion"
        raise TrainerError("bad_data", message)
    parsed_rewards = [_finite_reward(r, f"reward {i}", where) for i, r in enumerate(rewards)]
    example = GroupExample(prompt, parsed, parsed_rewards, baseline=baseline)
    if "completionSpans" in obj:
        per = obj["completionSpans"]
        if not isinstance(per, list) or len(per) != len(parsed):
            message = f"{where}: \"completionSpans\" must be a list of {len(parsed)} span lists, one per completion"
            raise TrainerError("bad_data", message)
        n = len(prompt)
        example.spans = [
            [(a + n, b + n) for a, b in _spans({"spans": s}, f"{where}: completion {i}", 0, len(c))]
            for i, (s, c) in enumerate(zip(per, parsed))
        ]
    return example


def _parse(obj, where, kinds, vocab, context):
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind not in kinds:
        expected = " or ".join(kinds)
        raise TrainerError("bad_data", f"{where}: kind {kind!r} is not accepted here (expected {expected})")
    if kind == "grpo":
        example = _group(obj, where, vocab)
        longest = len(example.prompt) + max(len(c) for c in example.completions)
    elif kind == "dpo":
        example = PairExample(*(_ids(obj, key, where, vocab) for key in ("prompt", "chosen", "rejected")))
        n = len(example.prompt)
        for key, side in (("chosenSpans", "chosen"), ("rejectedSpans", "rejected")):
            if key in obj:
                spans = _spans({"spans": obj[key]}, where, 0, len(getattr(example, side)))
                setattr(example, f"{side}_spans", [(a + n, b + n) for a, b in spans])
        longest = len(example.prompt) + max(len(example.chosen), len(example.rejected))
    else:
        ids = _ids(obj, "ids", where, vocab, min_len=2)
        start = obj.get("start", 1) if kind == "lm" else obj.get("start")
        if not isinstance(start, int) or isinstance(start, bool) or not 1 <= start < len(ids):
            message = f"{where}: \"start\" must be an integer with 1 <= start < {len(ids)}"
            raise TrainerError("bad_data", message)
        spans = _spans(obj, where, start, len(ids)) if kind == "sft" and "spans" in obj else None
        example, longest = SeqExample(ids, start, spans), len(ids)
    if longest > context:
        raise TrainerError("bad_data", f"{where}: {longest} tokens do not fit the context length {context}")
    return example


def load_dataset(path, kinds, vocab, context, what="training data"):
    """Reads a JSONL dataset accepting the given kinds; raises bad_data / empty_data."""
    examples = []
    try:
        with open(path, "r", encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                where = f"{path} line {number}"
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as err:
                    raise TrainerError("bad_data", f"{where}: malformed JSON ({err.msg})") from err
                examples.append(_parse(obj, where, kinds, vocab, context))
    except FileNotFoundError as err:
        raise TrainerError("bad_data", f"{what} {path} does not exist") from err
    except UnicodeDecodeError as err:
        raise TrainerError("bad_data", f"{path}: not UTF-8 text") from err
    if not examples:
        raise TrainerError("empty_data", f"{what} {path} has no examples")
    return Dataset(path, sha256_file(path), examples)


def seq_batch(examples, device):
    """Right-padded (inputs, targets): targets[b, t] = ids[t+1] where it is a loss token, else IGNORE."""
    width = max(len(e.ids) for e in examples) - 1
    inputs = torch.zeros((len(examples), width), dtype=torch.long)
    targets = torch.full((len(examples), width), IGNORE, dtype=torch.long)
    for row, e in enumerate(examples):
        n = len(e.ids) - 1
        inputs[row, :n] = torch.tensor(e.ids[:-1])
        for a, b in e.loss_ranges():
            targets[row, a - 1 : b - 1] = torch.tensor(e.ids[a:b])
    return inputs.to(device), targets.to(device)


def group_sequences(examples):
    """Every completion of every group as an SFT-style sequence, group by group."""
    return [
        SeqExample(e.prompt + c, len(e.prompt), e.spans[i] if e.spans is not None else None)
        for e in examples
        for i, c in enumerate(e.completions)
    ]


def pair_sequences(examples):
    """DPO pairs as SFT-style sequences: all chosen completions, then all rejected ones."""
    chosen = [SeqExample(e.prompt + e.chosen, len(e.prompt), e.chosen_spans) for e in examples]
    rejected = [SeqExample(e.prompt + e.rejected, len(e.prompt), e.rejected_spans) for e in examples]
    return chosen + rejected
