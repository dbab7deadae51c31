"""Training budget as an axis, from one run: the checkpoints validation selects, with their test
scores, so that a report can state a run's result at any budget up to its own.

What is recorded. Whenever a trial's validation score improves (the trainer's key: exact strings,
then right positions, compared strictly, so the first of equal checkpoints is kept), the trainer
scores that checkpoint on every test bin and appends an *improvement record* to
``results.json["improvements"]``: trial, epoch, step, the validation key and scores, and the
per-bin test metrics. An epoch without improvement records nothing: the checkpoint validation
would select is then still the previous record.

The budget-B answer. ``at_budget(results, B)`` is the record with the best validation key among
the records of epochs ≤ B of each trial, taken in the order training produced them and with the
first of equal keys winning — exactly the checkpoint the trainer would have selected had every
trial stopped after B epochs. At B ≥ the epochs a run trained, it is the run's own final choice,
and its bins equal ``results["bins"]``.

How this differs from a run trained for B epochs. Identical where the trainer's history up to
epoch B does not depend on the budget: the batch order (seeded per epoch), the initialization and
a ``constant`` learning-rate schedule (warm-up included: its length is in steps, not a fraction
of the budget) do not, and neither do early stopping at 100% validation or ``patience`` (both
look backwards only). A ``linear`` or ``cosine`` schedule does: it decays over the configured
number of epochs, so the first B epochs of a longer run have a higher learning rate than a
B-epoch run, whose schedule would have reached zero at epoch B. For such runs a budget view is
"the first B epochs of the configured run", not "a run with budget B"; the report says which
schedule its cells used. A search over several trials (the knee-deep preset) applies the budget
to every trial.
"""

from __future__ import annotations

from typing import Any, Mapping

IMPROVEMENTS_KEY = "improvements"


def improvement_record(trial: int, line: Mapping[str, Any], val, bins: Mapping) -> dict:
    """The record of a checkpoint whose validation improved (``val``: its ``SplitMetrics``)."""
    return {"trial": trial, "epoch": int(line["epoch"]), "step": int(line["step"]),
            "val_key": list(val.key()), "val_exact_match": val.exact_match,
            "val_token_accuracy": val.token_accuracy, "bins": dict(bins)}


def at_budget(results: Mapping, budget: int) -> dict | None:
    """The improvement record validation selects within ``budget`` epochs of each trial, or None
    when the run recorded none (trained before crasp recorded them, or ``budget`` < 1)."""
    best = None
    for record in results.get(IMPROVEMENTS_KEY) or ():
        if record["epoch"] <= budget and (best is None or record["val_key"] > best["val_key"]):
            best = record
    return best


def results_at_budget(results: Mapping, budget: int) -> dict | None:
    """``results`` as they would read had every trial stopped after ``budget`` epochs: bins,
    validation scores, success (100% validation) and epochs from ``at_budget``. None where the
    run cannot answer: no records, or a budget beyond the epochs it was configured for that it
    used up (a run that stopped early answers for every budget)."""
    configured = int((results.get("config") or {}).get("epochs") or 0)
    if budget > configured and results.get("stopped") == "max_epochs":
        return None  # the run ran out of epochs before the budget: it cannot answer for it
    record = at_budget(results, budget)
    if record is None:
        return None
    trained = int(results.get("epochs") or budget)
    return {**results, "bins": record["bins"], "val_exact_match": record["val_exact_match"],
            "val_token_accuracy": record["val_token_accuracy"],
            "success": record["val_exact_match"] >= 1.0, "best_epoch": record["epoch"],
            "epochs": min(trained, budget), "budget": budget}


def trained_epochs(results: Mapping) -> int:
    """The most epochs any trial of the run trained (the largest budget it can answer for)."""
    trials = results.get("trials") or ()
    return max([int(t.get("epochs") or 0) for t in trials] + [int(results.get("epochs") or 0)])
