"""``turnback.models`` still names the results that live in ``turnback.results`` (cold28):
the API's import paths are unchanged."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

import turnback
from turnback import models, results

MOVED = ("Change", "FileContent", "GcResult", "RewindResult", "SessionLog", "SessionPage",
         "SessionSummary")


@pytest.mark.parametrize("name", MOVED)
def test_models_names_each_moved_result_as_the_very_class(name: str) -> None:
    assert getattr(models, name) is getattr(results, name)
    if name in turnback.__all__:  # the package names three of the four
        assert getattr(turnback, name) is getattr(results, name)
    exec(f"from turnback.models import {name} as got", scope := {})  # the import statement
    assert scope["got"] is getattr(results, name)


def test_an_unknown_name_of_models_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"'turnback\.models' has no attribute 'Nope'"):
        models.Nope  # noqa: B018
    with pytest.raises(ImportError):
        exec("from turnback.models import Nope", {})


def test_a_moved_result_pickles_and_compares_as_before() -> None:
    change = models.Change("a/b", "modified", lines_added=2)
    again = pickle.loads(pickle.dumps(change))
    assert again == change and again is not change
    assert repr(change).startswith("Change(path='a/b', status='modified'")
    assert change.to_json()["linesAdded"] == 2


def test_importing_models_alone_does_not_import_results() -> None:
    """What a checkpoint relies on: ``models`` itself never loads ``results``."""
    code = ("import sys, turnback.models; "
            "print('turnback.results' in sys.modules, 'Change' in vars(turnback.models))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]
