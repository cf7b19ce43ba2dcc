"""Per-request LoRA switching in llama-server (bench/device/run.sh): one base, four adapters
loaded once (ids 0..3: chat, coding, agent, ui). Prints one JSON object:
- sequential: the same prompt under each adapter set, switching every request vs keeping one
  set (median ms per request, generated tokens/s), and how many distinct answers the sets give
  (switching that changed nothing would give one);
- concurrent: 4 requests at once with one adapter set vs 4 different ones (wall ms, tok/s)."""
import json
import statistics
import sys
import threading
import time
import urllib.request

URL = sys.argv[1]
SETS = {
    "none": [0, 0, 0, 0],
    "chat": [1, 0, 0, 0],
    "coding": [0, 1, 0, 0],
    "agent": [0, 0, 1, 0],
    "ui": [0, 0, 0, 1],
    "chat+coding": [0.5, 0.5, 0, 0],
}
PROMPT = "<|im_start|>user\nWrite a function that reverses a string.<|im_end|>\n<|im_start|>assistant\n"


def post(scales, n=48, prompt=PROMPT):
    body = {
        "prompt": prompt,
        "n_predict": n,
        "temperature": 0,
        "cache_prompt": False,
        "lora": [{"id": i, "scale": s} for i, s in enumerate(scales)],
    }
    req = urllib.request.Request(URL + "/completion", json.dumps(body).encode(), {"Content-Type": "application/json"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        out = json.load(r)
    return (time.perf_counter() - t) * 1000, out


for _ in range(600):
    try:
        with urllib.request.urlopen(URL + "/health", timeout=2) as r:
            if r.status == 200:
                break
    except Exception:
        time.sleep(0.1)

post(SETS["none"])  # warm-up
names = list(SETS)
switching, answers, tokens_sw = [], {}, 0
for rnd in range(5):
    for name in names:
        ms, out = post(SETS[name])
        switching.append(ms)
        tokens_sw += out.get("tokens_predicted", 0)
        answers[name] = out["content"]
keeping, tokens_keep = [], 0
for name in names:
    for rnd in range(5):
        ms, out = post(SETS[name])
        keeping.append(ms)
        tokens_keep += out.get("tokens_predicted", 0)


def concurrent(sets):
    res = [None] * len(sets)

    def go(i):
        res[i] = post(SETS[sets[i]], n=96)

    t = time.perf_counter()
    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(sets))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = (time.perf_counter() - t) * 1000
    toks = sum(r[1].get("tokens_predicted", 0) for r in res)
    return {"wall_ms": round(wall, 1), "tokens": toks, "tok_s": round(toks / wall * 1000, 1)}


same = [concurrent(["coding"] * 4) for _ in range(3)]
mixed = [concurrent(["chat", "coding", "agent", "ui"]) for _ in range(3)]
print(
    json.dumps(
        {
            "sequential": {
                "switch_every_request_median_ms": round(statistics.median(switching), 2),
                "same_set_median_ms": round(statistics.median(keeping), 2),
                "switch_tok_s": round(tokens_sw / sum(switching) * 1000, 1),
                "same_tok_s": round(tokens_keep / sum(keeping) * 1000, 1),
                "requests_each": len(switching),
                "distinct_answers_of_6_sets": len(set(answers.values())),
                "answers": answers,
            },
            "concurrent_4": {"same_adapter": same, "four_adapters": mixed},
        },
        indent=1,
    )
)
