"""Test configuration: helpers in tests/ are importable, and every test runs in a scratch
directory where ``examples/`` is the reference-program directory of the crasp being tested.

The tests name programs as a user would (``crasp run examples/dyck1.crasp``); resolving them
through the package (``crasp.languages.programs.PROGRAMS_DIR``) rather than the checkout means
that the same suite, run against an installed wheel from outside the source tree, fails when a
program is missing from the wheel. Files a test writes into its working directory land in the
scratch directory, never in the checkout.
"""

import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
# Subprocesses the tests start run in the scratch directory: a relative PYTHONPATH (such as
# PYTHONPATH=. in a checkout) must keep naming the crasp under test there.
if os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        str(Path(entry).resolve()) for entry in os.environ["PYTHONPATH"].split(os.pathsep))

# Ctrl-C tests send SIGINT to this process and to the processes they start. A shell starts
# background jobs with SIGINT ignored (the suite run as `pytest ... &`), and an
# ignored signal stays ignored in every process started from here: restore Python's handler.
signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long experiments, not run in CI (run with -m slow)")


settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def working_directory(tmp_path_factory):
    """cd into a scratch directory whose ``examples`` links to the packaged programs."""
    from crasp.languages.programs import PROGRAMS_DIR

    scratch = tmp_path_factory.mktemp("cwd")
    (scratch / "examples").symlink_to(PROGRAMS_DIR, target_is_directory=True)
    previous = Path.cwd()
    os.chdir(scratch)
    yield scratch
    os.chdir(previous)


@pytest.fixture
def one_torch_thread():
    """Small tensors: torch's thread pool only adds overhead (and the machine is shared)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
