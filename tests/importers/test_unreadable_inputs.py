"""An input an importer cannot read becomes one problem naming the file, why, and what is
skipped: the input refused (too large, not a regular file) or the system's error. Gemini's
and Crush's parsers and ``DocumentParser.load`` say it with ``base.unreadable`` (tidy31)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from turnback.errors import InvalidInput, Unsafe
from turnback.importers import registry
from turnback.importers.base import Context, Problem


def _problems(source: str, path: Path) -> list[Problem]:
    parser = registry.get(source).parser(path, Context(path.parent, path.parent, {}))
    return list(parser.parse())  # type: ignore[arg-type]


def _refuse(monkeypatch: pytest.MonkeyPatch, opener: str, exc: Exception) -> None:
    def refused(*_a: object, **_k: object) -> object:
        raise exc

    monkeypatch.setattr(opener, refused)


@pytest.mark.parametrize(("exc", "said"), [
    (OSError(errno.EIO, "Input/output error"), "cannot read (Input/output error); {} skipped"),
    (InvalidInput("the file is larger than 8 MB"), "the file is larger than 8 MB; {} skipped"),
    (Unsafe("a link, not a file"), "a link, not a file; {} skipped"),
])
@pytest.mark.parametrize(("source", "opener", "what"), [
    ("gemini-cli", "turnback.importers.agents.gemini.read_regular", "file"),
    ("crush", "turnback.importers.agents.crush.open_db", "database"),
    # a parser that reads through ``DocumentParser.load``
    ("snapshot-json", "turnback.importers.base.read_regular", "file"),
])
def test_an_unreadable_input_is_one_problem_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception, said: str,
        source: str, opener: str, what: str) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"{}")
    _refuse(monkeypatch, opener, exc)
    got = _problems(source, path)
    assert [(p.file, p.line, p.message) for p in got] == [(str(path), 0, said.format(what))]
