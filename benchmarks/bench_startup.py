"""Start-up and ``crasp run --model`` overhead, each as a ratio to a baseline run in the same
invocation (best of N wall-clock timings; the machine is shared, so compare the ratios).

1. ``crasp run examples/dyck1.crasp "( )"``, start to finish, in a fresh process (goal: at most
   0.25 s), against a fresh ``python -c "import numpy"`` (the interpreter's one heavy import,
   the floor of any answer) and a bare ``python -c pass``.
2. ``crasp run --model dyck1.model`` on standard input, against ``crasp.compiler.execute`` on the
   same token lists (goal: at most 1.5 times), for several batch shapes: in-process (the
   command through click's runner; the baseline with the model already loaded), and as whole
   processes (the command; a Python process that loads the model and calls ``execute``; both
   import torch).

    python benchmarks/bench_startup.py [--repeats 7] [--shapes 20000x3,2000x20,200x500,10x5000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import best_of  # noqa: E402

CRASP = str(Path(sys.executable).with_name("crasp"))
SHAPES = [(20_000, 3), (2_000, 20), (200, 500), (10, 5_000)]
"""(inputs, tokens each)."""


def process(*command: str, stdin: bytes | None = None) -> None:
    subprocess.run(command, input=stdin, capture_output=True, check=True, cwd=ROOT)


def startup(repeats: int) -> None:
    bare = best_of(repeats, lambda: process(sys.executable, "-c", "pass"))
    numpy = best_of(repeats, lambda: process(sys.executable, "-c", "import numpy"))
    run = best_of(repeats, lambda: process(CRASP, "run", "examples/dyck1.crasp", "( )"))
    print(f"start to finish, run PROG '( )': {run:.3f} s (goal <= 0.25 s); "
          f"python -c 'import numpy' {numpy:.3f} s: ratio {run / numpy:.2f}; "
          f"python -c pass {bare:.3f} s: ratio {run / bare:.2f}")


def run_model(repeats: int, place: Path, shapes: list[tuple[int, int]]) -> None:
    import numpy as np
    import torch
    from click.testing import CliRunner

    import crasp
    from crasp.cli import cli
    from crasp.compiler import compile_program, execute, load_model

    torch.set_num_threads(1)
    model_dir = place / "dyck1.model"
    compile_program(crasp.load_program(ROOT / "examples/dyck1.crasp")).save(model_dir)
    model = load_model(model_dir)
    rng = np.random.default_rng(0)
    print(f"\n{'inputs':>7}{'tokens':>7}{'execute s':>11}{'run --model s':>15}{'ratio':>7}"
          f"{'process: execute s':>20}{'run --model s':>15}{'ratio':>7}")
    for count, length in shapes:
        inputs = [list(rng.choice(["(", ")"], length)) for _ in range(count)]
        text = "\n".join(" ".join(tokens) for tokens in inputs) + "\n"
        lines = place / f"inputs-{count}-{length}.txt"
        lines.write_text(text)

        def command() -> None:
            result = CliRunner().invoke(cli, ["run", "--model", str(model_dir)], input=text)
            assert result.exit_code == 0, result.output

        baseline = best_of(repeats, lambda: execute(model, inputs))
        in_process = best_of(repeats, command)
        script = ("import sys, torch; torch.set_num_threads(1)\n"
                  "from crasp.compiler import execute, load_model\n"
                  "inputs = [line.split() for line in open(sys.argv[2])]\n"
                  "execute(load_model(sys.argv[1]), inputs)")
        process_baseline = best_of(repeats, lambda: process(
            sys.executable, "-c", script, str(model_dir), str(lines)))
        whole = best_of(repeats, lambda: process(CRASP, "run", "--model", str(model_dir),
                                                 stdin=text.encode()))
        print(f"{count:>7}{length:>7}{baseline:>11.3f}{in_process:>15.3f}"
              f"{in_process / baseline:>6.2f}x{process_baseline:>20.3f}{whole:>15.3f}"
              f"{whole / process_baseline:>6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--shapes", default=",".join(f"{count}x{length}"
                                                     for count, length in SHAPES),
                        help="the batch shapes of part 2, INPUTSxTOKENS, comma-separated")
    args = parser.parse_args()
    shapes = [tuple(int(n) for n in shape.split("x")) for shape in args.shapes.split(",")]
    startup(args.repeats)
    with tempfile.TemporaryDirectory() as place:
        run_model(max(3, args.repeats // 2), Path(place), shapes)


if __name__ == "__main__":
    main()
