"""Dev-only stub of the crasp.languages contract (L_k only)."""
import re, sys, types
from dataclasses import dataclass, field
import numpy as np
from crasp.errors import CraspError
import crasp.languages as L

@dataclass
class Language:
    name: str; k: int
    alphabet: tuple = ("a", "b")
    expressible: bool = True
    program_path: str | None = None
    @property
    def recognition_depth(self): return self.k - 1
    @property
    def prediction_depth(self): return max(1, self.k - 2)

@dataclass
class Split:
    name: str; lo: int; hi: int; strings: list; labels: list; duplicates: int = 0

@dataclass
class Task:
    train: Split; val: Split; tests: list; vocab: tuple

def get_language(name):
    m = re.fullmatch(r"L(\d+)", str(name))
    if not m: raise CraspError(f"unknown language {name!r}")
    return Language(name, int(m.group(1)))

def _gen(k, lo, hi, n, rng):
    out, labs = [], []
    for _ in range(n):
        length = int(rng.integers(max(lo, k), hi + 1))
        sw = sorted(rng.choice(np.arange(1, length), size=k - 1, replace=False)) if k > 1 else []
        s, lab, cur, j = [], [], "a", 0
        for i in range(length):
            if j < len(sw) and i == sw[j]:
                cur = "b" if cur == "a" else "a"; j += 1
            s.append(cur); lab.append(j == k - 1)
        out.append(s); labs.append(np.array(lab, dtype=bool))
    return out, labs

def build_task(lang, train_bin, test_bins, n_train, n_test, val_fraction, seed):
    rng = np.random.default_rng(seed)
    s, l = _gen(lang.k, *train_bin, n_train, rng)
    nv = int(round(n_train * val_fraction))
    tr = Split("train", *train_bin, s[nv:], l[nv:]); va = Split("val", *train_bin, s[:nv], l[:nv])
    tests = []
    for lo, hi in test_bins:
        ts, tl = _gen(lang.k, lo, hi, n_test, rng)
        tests.append(Split(f"{lo}:{hi}", lo, hi, ts, tl))
    return Task(tr, va, tests, ("a", "b"))

if not hasattr(L, "get_language"):
    L.get_language = get_language; L.build_task = build_task
