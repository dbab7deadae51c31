"""TEMPORARY (deleted before hand-off): explore default-preset candidates in parallel."""
import json, os, sys, time, itertools
os.environ.setdefault("OMP_NUM_THREADS", "1")
from multiprocessing import Pool

def job(args):
    name, over = args
    from crasp.train import resolve_preset, train
    c = resolve_preset("default", **over)
    t = time.time()
    r = train(c, f"/tmp/explore/{name}", resume=False)
    return {"name": name, "val": r["val_exact_match"], "ep": r["epochs"], "best": r["best_epoch"],
            "bins": {k: round(v["exact_match"], 3) for k, v in r["bins"].items()},
            "tok": {k: round(v["token_accuracy"], 3) for k, v in r["bins"].items()},
            "s": round(time.time() - t, 1), "train_s": round(r["train_time_s"], 1)}

if __name__ == "__main__":
    spec = json.loads(sys.argv[1])  # {"base": {...}, "cells": [[lang, depth], ...], "vary": {"lr": [..]}}
    jobs = []
    keys = list(spec.get("vary", {}))
    for cell in spec["cells"]:
        lang, depth, extra = cell[0], cell[1], (cell[2] if len(cell) > 2 else {})
        for vals in itertools.product(*[spec["vary"][k] for k in keys]):
            over = {**spec.get("base", {}), "language": lang, "depth": depth, **extra, **dict(zip(keys, vals))}
            name = f"{lang}-d{depth}-" + "-".join(f"{k}{v}" for k, v in list(extra.items()) + list(zip(keys, vals)))
            jobs.append((name, over))
    with Pool(int(spec.get("procs", 14))) as pool:
        for res in pool.imap_unordered(job, jobs):
            print(json.dumps(res), flush=True)
