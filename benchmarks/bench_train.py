"""Training throughput: the official Knee-Deep recipe against ``crasp train``.

    python benchmarks/bench_train.py [--repeats 3] [--strings 100] [--default-strings 1000]
                                     [--device cpu]

On L5 at depth 3, one thread, it measures

  (a) the official recipe as the paper's code runs it: ``nn.TransformerDecoder`` (d_model 256,
      1 head, feed-forward 2048, dropout 0.1, post-LN) over an all-zero memory, a boolean causal
      mask, Adam, batch size 1, cross-entropy over every position including BOS;
  (b) ``crasp train --preset knee-deep`` at the same size (d_model 256, lr 1e-4), through the
      real training loop (``train()``), on the same train bin 201-250;
  (c) ``crasp train`` with the default preset (same train bin 201-250), and (c') the default
      preset on the shorter train bin 101-150 (the cheaper option discussed in docs/train.md).

Throughput of (b), (c), (c') is read from ``metrics.jsonl`` (training time of one epoch,
validation excluded). Each measurement is repeated ``--repeats`` times, interleaved, and the
median is reported. Goals: (b) >= (a) in tokens/s; (c) >= 15x (a) in strings/s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crasp.languages import build_task, get_language  # noqa: E402
from crasp.train import resolve_preset  # noqa: E402
from crasp.train.loop import train  # noqa: E402


class OfficialModel(nn.Module):
    """The structure of the official ``TransformerCharPredictor`` (rewritten, not copied)."""

    def __init__(self, d_model=256, heads=1, layers=3, vocab=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerDecoderLayer(d_model=d_model, nhead=heads, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, num_layers=layers)
        self.out = nn.Linear(d_model, 2)

    def forward(self, x):
        h = self.embed(x)
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool,
                                     device=x.device), diagonal=1)
        return self.out(self.decoder(h, memory=torch.zeros_like(h), tgt_mask=mask))


def official(strings, labels, device) -> tuple[float, float]:
    """(tokens/s, strings/s) of batch-1 training steps of the official recipe."""
    torch.manual_seed(42)
    model = OfficialModel().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    ids = {"a": 0, "b": 1}
    data = [(torch.tensor([[2] + [ids[t] for t in s]], device=device),
             torch.tensor([[0] + [int(v) for v in y]], device=device))
            for s, y in zip(strings, labels)]
    model.train()
    for x, y in data[:3]:  # warm-up
        loss = loss_fn(model(x).view(-1, 2), y.view(-1))
        optimizer.zero_grad(); loss.backward(); optimizer.step()
    _sync(device)
    start = time.perf_counter()
    tokens = 0
    for x, y in data:
        loss = loss_fn(model(x).view(-1, 2), y.view(-1))
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        tokens += x.shape[1]
    _sync(device)
    elapsed = time.perf_counter() - start
    return tokens / elapsed, len(data) / elapsed


def _sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def crasp_run(config) -> tuple[float, float]:
    """(tokens/s, strings/s) of the first epoch of ``train(config)``."""
    with tempfile.TemporaryDirectory() as run_dir:
        train(config, run_dir, progress=False, resume=False)
        line = json.loads((Path(run_dir) / "metrics.jsonl").read_text().splitlines()[0])
    return line["tokens_per_s"], line["strings_per_s"]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--strings", type=int, default=100,
                        help="training strings per measurement of (a) and (b)")
    parser.add_argument("--default-strings", type=int, default=1000,
                        help="training strings per measurement of (c) and (c')")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    device = torch.device(args.device)

    language = get_language("L5")
    task = build_task(language, train_bin=(201, 250), test_bins=[(251, 260)],
                      n_train=args.strings, n_test=1, val_fraction=0.01, seed=0)
    strings, labels = task.train.strings[:args.strings], task.train.labels[:args.strings]
    n_val_train = int(round(args.strings * 1.25))  # train() holds out val_fraction=0.2
    common = dict(language="L5", depth=3, device=args.device, seed=0, epochs=1, n_test=1)
    knee = resolve_preset("knee-deep", d_model=256, lr=1e-4, n_train=n_val_train,
                          test_bins=[(251, 260)], **common)
    default = resolve_preset("default", n_train=args.default_strings, test_bins=[(251, 260)],
                             **common)
    default_short = resolve_preset("default", n_train=args.default_strings, train_bin=(101, 150),
                                   test_bins=[(151, 160)], **common)
    runs = {"a_official": [], "b_knee_deep": [], "c_default": [], "c_default_101_150": []}
    for _ in range(args.repeats):
        runs["a_official"].append(official(strings, labels, device))
        runs["b_knee_deep"].append(crasp_run(knee))
        runs["c_default"].append(crasp_run(default))
        runs["c_default_101_150"].append(crasp_run(default_short))
    report = {name: {"tokens_per_s": statistics.median(t for t, _ in values),
                     "strings_per_s": statistics.median(s for _, s in values)}
              for name, values in runs.items()}
    a = report["a_official"]
    report["ratios"] = {
        "b_over_a_tokens": report["b_knee_deep"]["tokens_per_s"] / a["tokens_per_s"],
        "c_over_a_strings": report["c_default"]["strings_per_s"] / a["strings_per_s"],
        "c101_over_a_strings": report["c_default_101_150"]["strings_per_s"] / a["strings_per_s"],
    }
    report["setup"] = {"device": str(device), "threads": torch.get_num_threads(),
                       "torch": torch.__version__, "repeats": args.repeats,
                       "strings": args.strings}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, values in runs.items():
            print(f"{name:>20}: {report[name]['tokens_per_s']:9.0f} tokens/s  "
                  f"{report[name]['strings_per_s']:8.1f} strings/s")
        for name, value in report["ratios"].items():
            print(f"{name:>20}: {value:.2f}x")
    return report


if __name__ == "__main__":
    main()
