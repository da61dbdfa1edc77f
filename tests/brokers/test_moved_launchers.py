"""The test-broker launchers moved out of the SDK (to ``omconnect_testbrokers`` in
``tests/brokers``); their old import paths keep working, with a deprecation warning, and
say how to install them where they are missing.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

MOVES = {
    "omconnect_kafka.testing": "omconnect_testbrokers.kafka",
    "omconnect_rabbitmq.testing": "omconnect_testbrokers.rabbitmq",
    "omconnect_pulsar.testing": "omconnect_testbrokers.pulsar",
    "omconnect.testing.broker_handles": "omconnect_testbrokers.handles",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVES.items()))
def test_an_old_import_path_gives_the_moved_module_with_a_warning(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        alias = importlib.import_module(old)
    moved = importlib.import_module(new)
    assert alias.__all__ == moved.__all__
    public = [n for n in vars(moved) if not n.startswith("_")]
    for name in public:  # exported or not, as before the move
        assert getattr(alias, name) is getattr(moved, name), f"{old}.{name}"


@pytest.mark.parametrize("old", sorted(MOVES))
def test_without_the_test_brokers_an_old_path_says_how_to_install_them(old: str) -> None:
    program = (
        "import sys\n"
        "sys.modules['omconnect_testbrokers'] = None\n"  # as if it were not installed
        "try:\n"
        f"    import {old}\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name, '|', exc)\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=60, check=True)
    name, _, message = result.stdout.partition(" | ")
    assert name == old
    assert "pip install -e tests/brokers" in message
