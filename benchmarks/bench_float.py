"""Float realization benchmarks (issue 14): certified lengths, measured failures, throughput.

1. For every compilable example: the largest certifiable length N in float32 and float64, the
   model's hidden layers and parameters, and, compiled at the float32 certificate, the measured
   first failing length beyond it (random strings up to 4 N, 8 per length).
2. Beyond the certificate in float32: compiled for N = 10^4 without a certificate, do random
   strings of length 10^4 still agree with the interpreter (the certificate is worst case)?
3. Throughput (tokens/s) of the float realization (the trainer's model class, float32, softmax
   attention) against the exact executor, on 1,000 random strings of length 1,000.
4. The exact model's ONNX graph (onnxruntime) against the exact executor at every position of
   random strings of length 10^5, with both timings.
5. Training from the gadgets (``crasp train --init-from DIR``): the L5 predictor realized with
   the robust and the minimal gadgets (N = 100), one epoch at lr 1e-4 on L5 (train 20-40,
   test 41-80; the recipes of tests/test_float_init.py, 100 and 200 training strings), five
   seeds: validation exact match before and after, minimal against robust.

    python benchmarks/bench_float.py [--strings 1000] [--length 1000] [--onnx-length 100000]
                                     [--skip certificates,beyond,throughput,onnx,init]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import crasp  # noqa: E402
from crasp.compiler import compile_program, execute, load_model  # noqa: E402
from crasp.realize.measure import first_disagreement, measure  # noqa: E402
from crasp.realize.realization import realize_float  # noqa: E402
from crasp.realize.checkpoint import save_float_realization  # noqa: E402
from timing import best_of  # noqa: E402

POSITIONAL = {"aa_star", "contains_ab"}
TIMED = ("majority", "dyck1", "anbncn", "L6")


def example(name: str):
    return crasp.load_program(str(ROOT / "examples" / f"{name}.crasp"))


def header(*columns: str) -> None:
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))


def random_batch(program, rng, strings: int, length: int) -> list[list[str]]:
    alphabet = np.array(program.alphabet, dtype=object)
    return [list(alphabet[rng.integers(0, len(alphabet), length)]) for _ in range(strings)]


def checkpoint(program, max_length, dtype, directory, require_certificate=True, style="robust"):
    realization = realize_float(program, max_length, dtype, require_certificate, style)
    save_float_realization(directory, realization, "bench", "")
    return realization, load_model(directory)


def certificates(scratch: Path) -> None:
    header("example", "gadgets", "layers", "hidden layers per FFN", "params (float)",
           "certified N float32", "certified N float64",
           "first failing length (float32, N = certificate)")
    for path in sorted((ROOT / "examples").glob("*.crasp")):
        if path.stem in POSITIONAL:
            continue
        program = crasp.load_program(str(path))
        for style in ("robust", "minimal"):
            n32 = realize_float(program, 1, "float32", style=style).largest_certifiable
            n64 = realize_float(program, 1, "float64", style=style).largest_certifiable
            realization, model = checkpoint(program, n32, "float32",
                                            scratch / f"{path.stem}-{style}", style=style)
            found = measure(program, model, n32)
            failing = (f"{found.first_failing_length:,}" if found.first_failing_length
                       else f"none up to {found.searched_up_to:,}")
            hidden = " ".join(str(len(w)) for w in realization.ffn_widths)
            print(f"| {path.stem} | {style} | {len(realization.ffn_widths)} | {hidden} | "
                  f"{model.params:,} | {n32:,} | {n64:,} | {failing} "
                  f"({failing_ratio(found, n32)}) |", flush=True)


def failing_ratio(found, certified) -> str:
    if not found.first_failing_length:
        return "-"
    return f"{found.first_failing_length / (certified + 1):.2f} (N + 1)"


def beyond(scratch: Path, length: int, strings: int) -> None:
    print(f"\nfloat32, compiled for N = {length:,} without a certificate; {strings} random "
          f"strings of length {length:,} (every position compared):")
    rng = np.random.default_rng(1)
    for name in ("majority", "dyck1", "L5_predict", "anbncn"):
        program = example(name)
        _, model = checkpoint(program, length, "float32", scratch / f"beyond-{name}",
                              require_certificate=False)
        failing = first_disagreement(program, model, random_batch(program, rng, strings, length))
        print(f"  {name}: " + ("agrees everywhere" if failing is None
                               else f"first disagreement at length {failing:,}"))


def throughput(scratch: Path, strings: int, length: int) -> None:
    print(f"\nthroughput, {strings:,} random strings of length {length:,} (tokens/s, encoding "
          f"included; best of 2):")
    header("program", "float realization (float32)", "exact executor", "float / exact")
    rng = np.random.default_rng(0)
    for name in TIMED:
        program = example(name)
        exact = compile_program(program)
        _, realized = checkpoint(program, length, "float32", scratch / f"speed-{name}")
        batch = random_batch(program, rng, strings, length)
        tokens = strings * length
        chunks = [batch[i:i + 50] for i in range(0, strings, 50)]  # bounded memory per call
        float_s = best_of(2, lambda: [execute(realized, chunk) for chunk in chunks])
        exact_s = best_of(2, lambda: [execute(exact, chunk) for chunk in chunks])
        print(f"| {name} ({exact.n_layers} layers) | {tokens / float_s:,.0f} | "
              f"{tokens / exact_s:,.0f} | {exact_s / float_s:.2f}x |")


def onnx_long(scratch: Path, length: int, strings: int) -> None:
    import time

    import onnxruntime

    from crasp.compiler.executor import _encode
    from crasp.export.onnx import write_onnx

    print(f"\nexact model as ONNX (onnxruntime) against the exact executor, {strings} random "
          f"strings of length {length:,}, every position compared:")
    header("program", "agree", "onnxruntime s", "executor s", "executor / onnxruntime")
    rng = np.random.default_rng(2)
    for name in TIMED:
        program = example(name)
        model = compile_program(program)
        write_onnx(model, scratch / f"{name}.onnx")
        session = onnxruntime.InferenceSession(str(scratch / f"{name}.onnx"))
        batch = random_batch(program, rng, strings, length)
        ids, _ = _encode(model, batch)
        start = time.perf_counter()
        decision = session.run(["decision"], {"ids": ids})[0]
        onnx_s = time.perf_counter() - start
        start = time.perf_counter()
        expected = execute(model, batch)
        exact_s = time.perf_counter() - start
        same = np.array_equal(decision[:, 1:], expected.output)
        print(f"| {name} | {'yes' if same else 'NO'} | {onnx_s:.2f} | {exact_s:.2f} | "
              f"{exact_s / onnx_s:.2f}x |")


def init(scratch: Path, seeds: int = 5) -> None:
    from crasp.realize.measure import compile_float
    from crasp.languages import get_language
    from crasp.train.init import adopt_architecture, load_initial_weights
    from crasp.train.loop import build_splits, train
    from crasp.train.metrics import evaluate
    from crasp.train.model import build_model
    from crasp.train.presets import resolve_preset

    print("\nTraining from the float realization of L5_predict (N = 100), one epoch, lr 1e-4, "
          "train 20-40 (a fifth of the strings for validation), test 41-80:")
    header("n_train", "gadgets", "validation exact match before (all seeds)",
           "after one epoch, per seed", "mean after")
    for n_train, n_test in ((100, 20), (200, 50)):
        means = {}
        for style in ("robust", "minimal"):
            directory = scratch / f"init-{style}"
            if not directory.exists():
                compile_float(example("L5_predict"), str(directory), 100, "float32",
                              measure_beyond=False, style=style)
            before, after = [], []
            for seed in range(seeds):
                config = adopt_architecture(resolve_preset(
                    "default", language="L5", depth=3, train_bin=(20, 40), test_bins=[(41, 80)],
                    n_train=n_train, n_test=n_test, epochs=1, device="cpu", lr=1e-4, seed=seed,
                    init_from=str(directory)))
                vocab, _, _, val, _ = build_splits(config, get_language("L5"))
                model = build_model(config, len(vocab))
                load_initial_weights(model, config, vocab)
                before.append(evaluate(model, val, torch.device("cpu"),
                                       config.eval_batch_tokens).exact_match)
                after.append(train(config, scratch / f"run-{style}-{n_train}-{seed}",
                                   progress=False, resume=False)["val_exact_match"])
            means[style] = sum(after) / len(after)
            print(f"| {n_train} | {style} | {', '.join(f'{v:.0%}' for v in before)} | "
                  f"{', '.join(f'{v:.0%}' for v in after)} | {means[style]:.1%} |", flush=True)
        print(f"n_train {n_train}: minimal / robust after one epoch "
              f"{means['minimal'] / means['robust']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strings", type=int, default=1000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--beyond-length", type=int, default=10_000)
    parser.add_argument("--beyond-strings", type=int, default=8)
    parser.add_argument("--onnx-length", type=int, default=100_000)
    parser.add_argument("--onnx-strings", type=int, default=4)
    parser.add_argument("--skip", default="", help="Comma-separated sections to skip.")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)\n")
    with tempfile.TemporaryDirectory() as scratch:
        if "certificates" not in skip:
            certificates(Path(scratch))
        if "beyond" not in skip:
            beyond(Path(scratch), args.beyond_length, args.beyond_strings)
        if "throughput" not in skip:
            throughput(Path(scratch), args.strings, args.length)
        if "onnx" not in skip:
            onnx_long(Path(scratch), args.onnx_length, args.onnx_strings)
        if "init" not in skip:
            init(Path(scratch))


if __name__ == "__main__":
    main()
