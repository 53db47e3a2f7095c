"""Run an import: find the input files, stream them through a parser, apply the records."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput, NotFound, Unsafe
from ..fs.paths import expand_home
from ..models import Problem
from ..store.facade import Store
from . import registry
from .base import Context, DocumentParser, FileParser, Record, SkippedLine, iter_raw_lines
from .inputs import check_named
from .result import ImportResult
from .sniff import LABELS, looks_like, same_family
from .writer import RecordWriter

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)
# Called between lines, records and files; raising from it stops the import. What
# was written stays and is consistent: the next import skips it by event id.
Check = Callable[[], None]
PROGRESS_EVERY = 1 << 20  # report progress each MiB read


@dataclass(slots=True)
class Cursor:
    """Where reading a file stopped: a follower resumes from here."""

    offset: int = 0
    line: int = 1


def make_context(store: Store, home: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] | None = None) -> Context:
    return Context(
        workspace=store.workspace,
        home=expand_home(home) if home is not None else Path.home(),
        env=dict(os.environ if env is None else env),
    )


def import_source(
    store: Store,
    source: str,
    path: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    check: Check | None = None,
) -> ImportResult:
    """Import SOURCE's sessions (from PATH, or the source's usual place) into ``store``.

    A PATH that is a link, FIFO or device is refused (:class:`Unsafe`); such files
    met inside a folder are skipped and listed in the result's problems.
    """
    src = registry.get(source)
    ctx = make_context(store, home, env)
    target: Path | None = None
    if path is not None and str(path) != "":
        target = expand_home(path).absolute()
        if not os.path.lexists(target):
            raise NotFound(f"{source} input {str(target)!r} does not exist")
        check_named(target)
    files = src.locate(ctx, target)
    result = ImportResult()
    for problem in ctx.refused:
        result.add_problem(problem)
    ctx.refused.clear()
    files = _own_files(src.name, files, named=target is not None and not target.is_dir(),
                       result=result)
    writer = RecordWriter(store, result)
    sizes = [_size(f) for f in files]
    total = sum(sizes)
    done = 0
    for f, size in zip(files, sizes, strict=True):
        if check is not None:
            check()
        writer.file = str(f)
        result.files += 1
        parser = src.parser(f, ctx)

        def step(n: int, base: int = done) -> None:
            if progress is not None:
                progress(base + n, total)

        if isinstance(parser, DocumentParser):
            for rec in document_records(parser, f):
                if check is not None:
                    check()
                writer.add(rec)
        else:
            read_lines(parser, f, writer, Cursor(), final=True, progress=step, check=check)
        done += size
        if progress is not None:
            progress(done, total)
    writer.close()
    return result


def read_lines(
    parser: FileParser,
    path: Path,
    writer: RecordWriter,
    cursor: Cursor,
    *,
    final: bool,
    progress: Callable[[int], None] | None = None,
    check: Check | None = None,
) -> bool:
    """Feed the complete lines from ``cursor`` on; advance it; True if any line was read."""
    start = cursor.offset
    next_report = start + PROGRESS_EVERY
    read = False
    try:
        lines = iter_raw_lines(path, cursor.offset, cursor.line, final=final,
                               limit=parser.ctx.max_line)
        for item in lines:
            if check is not None:
                check()
            if isinstance(item, Problem):
                writer.add(item)
                continue
            if isinstance(item, SkippedLine):
                writer.add(item.problem)
                cursor.offset, cursor.line = item.end, item.number + 1
                continue
            read = True
            cursor.offset, cursor.line = item.end, item.number + 1
            try:
                records = list(parser.feed(item))
            except Exception as exc:  # one odd line must not stop an import
                writer.add(parser.problem(item.number, f"could not read this line ({exc!r})"))
                continue
            for rec in records:
                writer.add(rec)
            writer.consumed(item.end - item.offset)
            if progress is not None and item.end >= next_report:
                progress(item.end - start)
                next_report = item.end + PROGRESS_EVERY
    except OSError as exc:
        writer.add(Problem(str(path), cursor.line, f"cannot read: {exc.strerror or exc}"))
    except Unsafe as exc:  # a link or FIFO found by a walk, or swapped in since
        writer.add(Problem(str(path), 0, f"{exc.message}; skipped"))
    try:
        finished = list(parser.finish(final))
    except Exception as exc:  # nor its last step the other files' import
        finished = [parser.problem(cursor.line, f"could not finish reading this file ({exc!r}); "
                                                "what it ended with skipped")]
    for rec in finished:
        writer.add(rec)
    return read


def document_records(parser: DocumentParser, path: Path) -> Iterator[Record]:
    """``parser``'s records; a mapping that raises is a problem naming the file, the
    records before it kept: one odd file must not stop the import of the others. Only the
    parser's step is guarded, so that the caller's ``check`` (a cancel) still stops it."""
    records = parser.parse()
    while True:
        try:
            rec = next(records)
        except StopIteration:
            return
        except Exception as exc:
            yield Problem(str(path), 0, f"could not read this file ({exc!r}); "
                                        "the rest of it skipped")
            return
        yield rec


def _own_files(source: str, files: list[Path], *, named: bool,
               result: ImportResult) -> list[Path]:
    """The files that are ``source``'s own: another tool's file named by the person is an
    error naming the source it looks like; one met in a folder is skipped and reported."""
    own = []
    for f in files:
        guess = looks_like(f) if not f.is_dir() else None
        if guess is None or same_family(guess, source):
            own.append(f)
            continue
        what = f"{f} looks like {LABELS.get(guess, guess)}, not a {source} file; " \
               f"use `turnback import {guess} {f}`"
        if named:
            raise InvalidInput(what)
        result.add_problem(Problem(str(f), 0, f"{what}; skipped"))
    return own


def _size(path: Path) -> int:
    try:
        if path.is_dir():
            return sum(p.stat().st_size for p in path.glob("*") if p.is_file())
        return path.stat().st_size
    except OSError:
        return 0
