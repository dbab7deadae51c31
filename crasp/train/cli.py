"""``crasp train``: train one causal transformer on a language and test length generalization.

The command builds the config from ``--preset`` plus every option given explicitly, checks it
(and the language) before any work, and writes a run directory (see ``crasp.train.run``).
"""

from __future__ import annotations

import difflib
import json
from contextlib import nullcontext
from pathlib import Path

import click

from crasp.errors import CraspError
from crasp.util.tables import format_table
from crasp.train.config import TrainConfig, config_fields
from crasp.train.field_text import OPTION_SPELLINGS, parse_field
from crasp.train.presets import preset_names, resolve_preset
from crasp.util.progress import progress_option, wants_progress

# config fields that ``crasp train`` sets through an option of the same name (--d-model sets
# d_model); ``search`` is set with --set, ``preset`` chooses the starting point
FIELD_OPTIONS = tuple(name for name in config_fields() if name not in ("preset", "search"))


def _overrides(params: dict, ctx: click.Context) -> dict:
    overrides = {}
    for field in FIELD_OPTIONS:
        value = params.get(field)
        if value is None:
            continue
        overrides[field] = (parse_field(field, value, TrainConfig)
                            if field in OPTION_SPELLINGS else value)
    return {**overrides, **_parse_set(params.get("set_values") or ())}


def _parse_set(items) -> dict:
    """``--set KEY=VALUE``: any config field, by its name, in the option spelling."""
    values = {}
    for item in items:
        if "=" not in item:
            raise CraspError(f"--set {item!r}: expected KEY=VALUE")
        key, text = item.split("=", 1)
        key = key.strip().replace("-", "_")
        if key not in config_fields():
            close = difflib.get_close_matches(key, config_fields(), n=1)
            raise CraspError(f"--set: unknown config field {key!r}"
                             + (f"; did you mean {close[0]!r}?" if close else "")
                             + f" (known: {', '.join(config_fields())})")
        values[key] = parse_field(key, text, TrainConfig)
    return values


def _given(ctx: click.Context) -> list[str]:
    names = []
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            names.append(name)
    return names


def _summary(results: dict, run_dir: Path) -> str:
    """The run's outcome in a few lines; a value results.json lacks (its shape lets any be
    null or absent: an older run, a fake, a hand-edited file) shows as "-"."""
    lines = [f"run: {run_dir}",
             f"validation exact match: {_shown(results.get('val_exact_match'))} "
             f"(epoch {_shown(results.get('best_epoch'), 'd')} of "
             f"{_shown(results.get('epochs'), 'd')}; "
             f"{'success' if results.get('success') else 'no success'})"]
    if results.get("selected"):
        lines.append("selected: " + ", ".join(f"{k}={v}" for k, v in results["selected"].items()))
    lines += format_table([("bin", "exact", "token", "n")] + [
        (name, _shown(metrics.get("exact_match")), _shown(metrics.get("token_accuracy")),
         _shown(metrics.get("n"), "d")) for name, metrics in results["bins"].items()],
        rule=False)
    lines.append(f"wall time: {_shown(results.get('wall_time_s'), '.1f')} s")
    return "\n".join(lines)


def _shown(value, spec: str = ".4f") -> str:
    return "-" if value is None else format(value, spec)


@click.command("train", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--preset", type=click.Choice(preset_names(), case_sensitive=False),
              default="default", show_default=True,
              help="Recipe to start from; the options below override it (their defaults shown are "
                   "the default preset's).")
@click.option("--language", "-l", help="Built-in language (L5, E4, dyck1, ...) or PROG.crasp.")
@click.option("--dialect", type=click.Choice(["crasp", "hahn"], case_sensitive=False),
              help="How a PROG.crasp language is read: crasp (conventional) or hahn (exactly as "
                   "Hahn's interpreter reads it; see docs/language.md).")
@click.option("--depth", type=int, help="Number of transformer layers (>= 1).")
@click.option("--posenc", help="Positional encoding: nope, rope, alibi, learned, sinusoidal, "
                              "sinusoidal-rational (periodic tables, --moduli), t5 "
                              "(T5's bucketed relative bias), rpe-log or rpe-lin (learned "
                              "log-type / linear-type relative bias).")
@click.option("--attention", type=click.Choice(["softmax", "dp-free", "hardmax"],
                                               case_sensitive=False),
              help="softmax (default); dp-free: scores from the positional bias alone, no q.k; "
                   "hardmax: argmax attention (ties share the weight), trained with a "
                   "straight-through estimator.")
@click.option("--qk-rank", type=int, help="Rank R of each head's W_Q W_K^T (queries and keys "
                                          "of R dims; default d_model / n_heads).")
@click.option("--t5-buckets", type=int, help="T5 bias: number of buckets (default 32).")
@click.option("--t5-max-distance", type=int,
              help="T5 bias: distances beyond this share the last bucket (default 128).")
@click.option("--d-model", type=int, help="Model width.")
@click.option("--n-heads", "--heads", "n_heads", type=int, help="Attention heads per layer.")
@click.option("--d-ff", type=int, help="Feed-forward width.")
@click.option("--dropout", type=float, help="Dropout probability.")
@click.option("--norm", help="LayerNorm placement: pre or post (or none).")
@click.option("--activation", help="Feed-forward activation: relu or gelu.")
@click.option("--rope-base", type=float, help="RoPE base (default 10000).")
@click.option("--rope-fraction", type=float,
              help="Fraction of each head's dimensions RoPE rotates (default 1: all).")
@click.option("--alibi-slopes", help="Comma-separated ALiBi slopes, one per head "
                                     "(default: the standard 2^(-8h/H)).")
@click.option("--moduli", help="Comma-separated moduli M of the periodic tables (posenc "
                               "sinusoidal-rational, or alibi): a table of M rows added at "
                               "position i by i mod M, initialized to the sinusoid at the "
                               "angles 2 pi k / M.")
@click.option("--alibi-impl", help="ALiBi implementation: mask or fold (same results).")
@click.option("--ffn-widths", metavar="W[+W...],...",
              help="Hidden widths of each layer's feed-forward network, layers separated by "
                   "commas and hidden layers by '+', e.g. 256,256+64 (default: d_ff per layer).")
@click.option("--lr", type=float, help="Peak learning rate.")
@click.option("--batch-size", type=int, help="Strings per optimizer step.")
@click.option("--epochs", type=int, help="Maximum epochs.")
@click.option("--warmup-steps", type=int, help="Linear warmup steps.")
@click.option("--lr-schedule", help="After warmup: constant, linear or cosine.")
@click.option("--weight-decay", type=float, help="AdamW weight decay.")
@click.option("--adam-beta1", type=float, help="AdamW beta1.")
@click.option("--adam-beta2", type=float, help="AdamW beta2.")
@click.option("--grad-clip", type=float, help="Gradient-norm clipping (0: none).")
@click.option("--patience", type=int,
              help="Stop after this many epochs without a better validation score (0: never).")
@click.option("--train-bin", help="Training lengths LO:HI (validation is a split of it).")
@click.option("--test-bins", help="Comma-separated test length bins, e.g. 101:150,151:200; "
                                  "LO:HI@NAME draws that bin from a test distribution (L_k, "
                                  "E_k: uniform, skewed, extreme), e.g. 351:400,351:400@skewed.")
@click.option("--n-train", type=int, help="Strings drawn in the train bin (before the split).")
@click.option("--n-test", type=int, help="Strings per test bin.")
@click.option("--val-fraction", type=float, help="Fraction of the train bin held out.")
@click.option("--data-seed", type=int, help="Seed of the data (default: --seed).")
@click.option("--seed", type=int, help="Random seed (weights, batch order, dropout, data).")
@click.option("--device", help="auto, cpu or cuda.")
@click.option("--threads", type=int, help="CPU threads of this process (default 1).")
@click.option("--eval-batch-tokens", type=int, help="Padded positions per evaluation batch.")
@click.option("--precision", metavar="P[.S]",
              help="Train the model format's fixed-precision class: every number P total bits, "
                   "S fractional (e.g. 8.4); no LayerNorm, NoPE, ReLU, the format's attention "
                   "(docs/train.md). The run is a format model (crasp decompile reads it).")
@click.option("--init-from", metavar="DIR|compiled",
              help="Start from a checkpoint (a trained run or a float realization) or from the "
                   "language's compiled reference program ('compiled'); the architecture is "
                   "the checkpoint's.")
@click.option("--set", "set_values", multiple=True, metavar="KEY=VALUE",
              help="Any other config field, VALUE as JSON (e.g. --set 'search=null').")
@click.option("--out", "-o", "out_dir", type=click.Path(file_okay=False),
              help="Run directory (default runs/<language>-d<depth>-<posenc>-s<seed>).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False),
              help="Continue the interrupted run in DIR (its config.json is used).")
@click.option("--force", is_flag=True, help="Start over in an existing run directory.")
@click.option("--print-config", is_flag=True, help="Print the resolved config and exit.")
@progress_option
@click.option("--json", "as_json", is_flag=True, help="Print results.json instead of a table.")
@click.pass_context
def train_command(ctx, preset, out_dir, resume_dir, force, print_config, progress, as_json,
                  **params):
    """Train a future-masked transformer of a chosen depth on a language and evaluate it on
    longer strings.

    \b
      crasp train --depth 3 --posenc rope --language L5
      crasp train --preset knee-deep --depth 1 --language L3 --epochs 1
      crasp train --language examples/dyck1.crasp --depth 2 -o runs/dyck1
      crasp train --resume runs/L5-d3-rope-s0

    Writes RUN/config.json, metrics.jsonl (one line per epoch), best.safetensors,
    last.safetensors and results.json (exact match and token accuracy per test bin).
    Ctrl-C leaves a resumable checkpoint; --resume DIR continues it to the same result.
    """
    try:
        config, run_dir, resume = _plan(ctx, preset, out_dir, resume_dir, force or print_config,
                                        params)
        if print_config:
            click.echo(config.to_json())
            return
        if resume_dir is None and params.get("language") is None:
            click.echo(f"no --language given: training the {preset} preset's {config.language} "
                       f"at depth {config.depth} with {config.posenc}, up to {config.epochs} "
                       f"epochs, into {run_dir} (crasp train --help for the options)", err=True)
        from crasp.train.loop import check_config, train
        from crasp.train.run import TrainingInterrupted

        if config.init_from and not resume:
            from crasp.train.init import COMPILED, adopt_architecture

            if config.init_from != COMPILED:  # a checkpoint, or one message saying what it is
                from crasp.models import check_kind

                check_kind(config.init_from, "train --init-from")
            config = adopt_architecture(config)
        check_config(config)
        if config.posenc == "alibi" and config.n_heads == 1 and config.alibi_slopes is None:
            click.echo("note: one-head ALiBi uses the standard slope 2^-8 (a bias of -1.56 at "
                       "distance 400: nearly NoPE); set --alibi-slopes to choose", err=True)
        from crasp.util.outputs import TRAINING_RUN, restored_on_failure

        try:
            # A fresh run must not touch a foreign folder; --force keeps the old run until the
            # new one has not failed (crasp.util.outputs.restored_on_failure).
            place = nullcontext() if resume else restored_on_failure(run_dir, TRAINING_RUN, force)
            with place:
                results = train(config, run_dir, progress=wants_progress(progress), resume=resume)
        except TrainingInterrupted:
            click.echo(f"\ninterrupted; the run is resumable: crasp train --resume {run_dir}",
                       err=True)
            ctx.exit(130)
            return
    except CraspError as error:
        click.echo(error.render(), err=True)
        ctx.exit(error.exit_code)
        return
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        click.echo(_summary(results, run_dir))


NONE_MEANS = {"alibi_slopes": "standard slopes", "data_seed": "--seed",
              "ffn_widths": "d_ff per layer"}


def _shown_default(name: str, value) -> str:
    """A default preset value as one would type it on the command line."""
    if value is None:
        return NONE_MEANS.get(name, "none")
    if isinstance(value, tuple):
        return f"{value[0]}:{value[1]}"
    if isinstance(value, list):
        return ",".join(_shown_default(name, item) for item in value)
    return str(value)


# every field option's --help shows the default preset's value (the one source of defaults)
for _param in train_command.params:
    if _param.name in FIELD_OPTIONS:
        _param.show_default = _shown_default(_param.name,
                                             getattr(resolve_preset("default"), _param.name))


def _plan(ctx, preset, out_dir, resume_dir, force, params) -> tuple[TrainConfig, Path, bool]:
    """The config, run directory and resume flag; every check that needs no work."""
    from crasp.util.outputs import TRAINING_RUN, holds
    from crasp.train.run import CONFIG_FILE, RESULTS_FILE, default_run_dir

    if resume_dir is not None:
        extra = [name for name in _given(ctx)
                 if name not in ("resume_dir", "progress", "as_json", "print_config")]
        if extra:
            raise CraspError("--resume continues a run with its stored config; do not combine "
                             "it with " + ", ".join("--" + n.replace("_", "-") for n in extra))
        path = Path(resume_dir) / CONFIG_FILE
        if not path.is_file():
            raise CraspError(f"--resume {resume_dir}: no run there (missing {CONFIG_FILE})")
        from crasp.train.run import read_json

        stored = read_json(path)
        if not isinstance(stored, dict):
            raise CraspError(f"{path}: a run's config must be a JSON object")
        try:
            config = TrainConfig.from_dict(stored)
        except (ValueError, TypeError) as error:
            raise CraspError(f"{path}: unreadable config ({error})") from None
        return config.validate(), Path(resume_dir), True
    config = resolve_preset(preset, **_overrides(params, ctx))
    run_dir = Path(out_dir) if out_dir else default_run_dir(config)
    if not force and holds(run_dir, TRAINING_RUN):
        state = "a finished run" if (run_dir / RESULTS_FILE).is_file() else "a run"
        raise CraspError(f"{run_dir} already holds {state}; use --resume {run_dir} to continue "
                         f"it, --force to start over, or --out for another directory")
    return config, run_dir, False
