"""What z3 counts against ``memory_max_size`` once it has run out of it (crasp/verify/solver.py
and docs/verification.md rest on it): a fresh process gives z3 a budget 20 MB above what it
holds, builds terms in its main context (where crasp builds them) until z3 runs out, then
drops every term. It prints the budget and what z3 counts at each step, in megabytes."""

import gc

import z3

MEMORY_PARAMETER = "memory_max_size"


def counted() -> float:
    return z3.Z3_get_estimated_alloc_size() / 2**20


def main() -> None:
    z3.main_ctx()
    budget = int(counted()) + 20
    z3.set_param(MEMORY_PARAMETER, budget)
    terms = []
    try:
        for position in range(10**7):
            terms.append(z3.Int(f"x{position}") + position)
    except z3.Z3Exception:
        pass
    at_running_out = counted()
    del terms
    gc.collect()
    after = counted()
    print(f"budget {budget} MB; counted when z3 ran out: {at_running_out:.0f} MB; "
          f"after every term was dropped: {after:.0f} MB")


if __name__ == "__main__":
    main()
