"""Generate SPEC's benchmark workspace, deterministically from a seed.

Default: 50,000 files, about 320 MB, 1,000 folders nested up to five levels,
lognormal sizes, some binary files, and a ``.gitignore`` that ignores a large
``node_modules/`` (20,000 more files, not counted in the 50,000). Text files
are made of source-like lines drawn from per-language pools, so compression
ratios and diffs look like a real code base's and not like noise or zeros.

The same seed and options give the same bytes (file contents, names and
modes); only mtimes differ. ``--files`` and ``--size-mb`` scale it down for
quick runs.

    python bench/gen_workspace.py bench/work/ws
    python bench/gen_workspace.py /tmp/ws --files 2000 --size-mb 12
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

MAX_FILE = 8 * 1024 * 1024  # under any sane snapshot size cap: both tools keep every file
BINARY_FRACTION = 0.04
EXECUTABLE_FRACTION = 0.01
SYMLINKS = 10
MARKER = ".bench-workspace"  # a file whose presence lets --force wipe the folder safely

_WORDS_TEXT = """
user account order item cart price total count index value key name path file buffer stream
reader writer parser token node tree graph edge vertex cache store session event handler
listener config option setting request response client server socket message queue worker
task job batch result error status state context scope module package component widget view
model controller service factory builder adapter proxy router route match filter map reduce
sort merge split join format encode decode hash digest signature verify render layout style
theme color size width height offset limit page cursor range span line column row table
field schema record entry log trace metric timer clock date time zone locale lang text label
title body header footer menu button input output form dialog modal panel tab grid list
array vector matrix point rect shape image frame pixel sample audio video codec frame packet
channel signal lock mutex thread pool retry timeout backoff policy rule plan step stage
phase commit branch diff patch blob object ref tag
"""
WORDS = _WORDS_TEXT.split()

_DIR_NAMES_TEXT = """
src lib app core utils helpers common shared components services models views controllers
api routes handlers middleware tests spec fixtures docs scripts tools config assets static
public styles images fonts locales i18n types interfaces internal pkg cmd server client web
mobile desktop cli db migrations schemas store state hooks providers adapters plugins
extensions modules features pages layouts widgets icons data examples benchmarks vendor
third_party proto gen
"""
DIR_NAMES = _DIR_NAMES_TEXT.split()

TEXT_EXTS = (
    (".py", 0.22), (".ts", 0.20), (".js", 0.12), (".tsx", 0.08), (".go", 0.06),
    (".rs", 0.05), (".c", 0.03), (".h", 0.03), (".md", 0.07), (".json", 0.06),
    (".yaml", 0.03), (".css", 0.03), (".html", 0.02),
)  # fmt: skip
BINARY_EXTS = (".png", ".jpg", ".woff2", ".pdf", ".zip", ".wasm", ".ico", ".gz")


def _ident(rng: random.Random, parts: int = 2, camel: bool = False) -> str:
    ws = [rng.choice(WORDS) for _ in range(parts)]
    if camel:
        return ws[0] + "".join(w.capitalize() for w in ws[1:])
    return "_".join(ws)


def _line_templates(lang: str) -> list[str]:
    """Source-like line shapes; ``{a}``/``{b}``/``{C}`` become identifiers, ``{n}`` a number."""
    if lang == "py":
        return [
            "def {a}({b}, {c}=None):", "    return {a}({b}) + {n}", "    {a} = {b}.{c}({n})",
            "        if {a} is None:", "            raise ValueError(\"{a} must be set\")",
            "class {C}({D}):", "    \"\"\"{C} keeps the {a} of each {b}.\"\"\"",
            "    for {a} in {b}:", "        {a}.append({b}[{n}])", "import {a}",
            "from {a}.{b} import {C}", "    # {a}: {b} {c} before the {d}", "",
            "    self.{a} = {b}", "    assert {a} == {n}, {b}", "    with open({a}) as {b}:",
            "        yield {a}, {b}", "@{a}", "    except {C}Error as exc:",
        ]  # fmt: skip
    if lang in ("ts", "js", "tsx"):
        return [
            "export function {a}({b}: {C}, {c}: number): {D} {{", "  const {a} = {b}.{c}({n});",
            "  if (!{a}) {{", "    throw new Error(`{a} missing: ${{{b}}}`);", "  }}", "}}",
            "import {{ {C} }} from './{a}';", "export interface {C} {{", "  {a}: {D};",
            "  {a}?: string;", "  return {a}.map(({b}) => {b}.{c});", "",
            "// {a} {b} {c} so that the {d} stays in sync", "  let {a} = await {b}({n});",
            "export class {C} extends {D} {{", "  private {a}: {C} | undefined;",
            "    {a}.{b}({c}, {n});", "  for (const {a} of {b}) {{",
        ]  # fmt: skip
    if lang in ("go", "rs", "c", "h"):
        return [
            "func {a}({b} *{C}, {c} int) ({D}, error) {{", "\t{a} := {b}.{c}({n})",
            "\tif err != nil {{", "\t\treturn nil, fmt.Errorf(\"{a}: %w\", err)", "\t}}", "}}",
            "fn {a}(&self, {b}: {C}) -> Result<{D}> {{", "    let {a} = {b}.{c}({n})?;",
            "static int {a}(struct {b} *{c}, size_t {d}) {{", "    {a}->{b} = {n};",
            "#include \"{a}.h\"", "// {a} {b} the {c} of each {d}", "",
            "typedef struct {{ int {a}; char *{b}; }} {C};", "    match {a} {{",
            "        {C}::{D} => {n},",
        ]  # fmt: skip
    if lang == "md":
        return [
            "# {C} {D}", "## {C}", "", "The {a} keeps one {b} per {c}, so {d} stays small.",
            "- `{a}`: the {b} of the {c}", "See `{a}.{b}()` for the {c} and {d}.",
            "```", "{a} --{b} {n}", "| {a} | {b} | {n} |",
        ]  # fmt: skip
    if lang in ("json", "yaml"):
        return [
            "  \"{a}\": \"{b}\",", "  \"{a}\": {n},", "  \"{a}\": {{", "  }},",
            "{a}:", "  {b}: {n}", "  - {a}-{b}", "    {a}: \"{b}\"",
        ]  # fmt: skip
    return [
        ".{a}-{b} {{", "  {a}: {n}px;", "}}", "<div class=\"{a}\">{C} {D}</div>",
        "<{a} id=\"{b}\"></{a}>", "  color: #{n};", "",
    ]  # fmt: skip


def _line_pool(rng: random.Random, lang: str, size: int) -> list[str]:
    templates = _line_templates(lang)
    pool: list[str] = []
    for _ in range(size):
        t = rng.choice(templates)
        pool.append(
            t.format(
                a=_ident(rng, rng.randint(1, 2), camel=lang not in ("py", "rs", "c", "h")),
                b=_ident(rng, 1),
                c=_ident(rng, rng.randint(1, 2)),
                d=rng.choice(WORDS),
                C=_ident(rng, 2).title().replace("_", ""),
                D=rng.choice(WORDS).title(),
                n=rng.randint(0, 4096),
            )
        )
    return pool


@dataclass
class Plan:
    files: int
    size_mb: float
    folders: int
    node_modules_files: int
    seed: int
    depth: int = 5  # folders nest up to this many levels
    node_modules_packages: int | None = None  # default: one per 40 ignored files


def _lognormal_sizes(rng: random.Random, n: int, total: int, sigma: float) -> list[int]:
    """``n`` lognormal sizes scaled to add up to about ``total``, each in [1, MAX_FILE]."""
    raw = [rng.lognormvariate(0.0, sigma) for _ in range(n)]
    scale = total / sum(raw)
    for _ in range(5):  # capping moves bytes out; rescale the uncapped ones
        sizes = [min(MAX_FILE, max(1, int(r * scale))) for r in raw]
        short = total - sum(sizes)
        uncapped = sum(r for r, s in zip(raw, sizes, strict=True) if s < MAX_FILE)
        if abs(short) < total * 0.001 or uncapped == 0:
            break
        scale *= 1 + short / (uncapped * scale)
    return sizes


def _make_dirs(rng: random.Random, count: int, max_depth: int = 5) -> list[str]:
    """``count`` distinct folders under the root, nested up to ``max_depth`` levels."""
    dirs: list[str] = []
    parents: list[tuple[str, int]] = [("", 0)]
    taken: set[str] = set()
    while len(dirs) < count:
        parent, depth = rng.choice(parents)
        name = rng.choice(DIR_NAMES) if rng.random() < 0.6 else _ident(rng, rng.randint(1, 2))
        path = f"{parent}/{name}" if parent else name
        if path in taken or path == "node_modules":
            continue
        taken.add(path)
        dirs.append(path)
        if depth + 1 < max_depth:
            parents.append((path, depth + 1))
    return dirs


def _text_file(rng: random.Random, pool: list[str], size: int) -> bytes:
    """About ``size`` bytes of lines from ``pool`` (cut to exactly ``size``)."""
    avg = 36
    lines = rng.choices(pool, k=max(1, size // avg + 1))
    data = ("\n".join(lines) + "\n").encode()
    while len(data) < size:
        data += (
            "\n".join(rng.choices(pool, k=max(1, (size - len(data)) // avg + 1))) + "\n"
        ).encode()
    return data[:size] if size > 1 else b"\n"


def _binary_file(rng: random.Random, ext: str, size: int) -> bytes:
    """Incompressible bytes behind a magic number: images and archives are compressed already."""
    magic = {
        ".png": b"\x89PNG\r\n\x1a\n", ".jpg": b"\xff\xd8\xff\xe0", ".pdf": b"%PDF-1.7\n",
        ".zip": b"PK\x03\x04", ".wasm": b"\x00asm\x01\x00\x00\x00", ".gz": b"\x1f\x8b\x08\x00",
        ".woff2": b"wOF2", ".ico": b"\x00\x00\x01\x00",
    }.get(ext, b"\x00")  # fmt: skip
    return (magic + rng.randbytes(max(0, size - len(magic))))[: max(size, 1)]


def _write(path: Path, data: bytes, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if executable:
        path.chmod(0o755)


def _pick_ext(rng: random.Random) -> str:
    exts, weights = zip(*TEXT_EXTS, strict=True)
    ext: str = rng.choices(exts, weights=weights)[0]
    return ext


def generate(out: Path, plan: Plan, progress: bool = True) -> dict[str, int]:
    """Write the workspace into ``out`` (which must not exist or be empty). Returns counts."""
    rng = random.Random(plan.seed)
    pools = {
        lang: _line_pool(random.Random(f"{plan.seed}:{lang}"), lang, 6000)
        for lang in (
            "py",
            "ts",
            "js",
            "tsx",
            "go",
            "rs",
            "c",
            "h",
            "md",
            "json",
            "yaml",
            "css",
            "html",
        )
    }
    dirs = _make_dirs(rng, plan.folders, plan.depth)
    total = int(plan.size_mb * 1024 * 1024)
    counts = {
        "files": 0,
        "bytes": 0,
        "binary": 0,
        "executable": 0,
        "symlinks": 0,
        "folders": len(dirs),
    }

    out.mkdir(parents=True, exist_ok=True)
    for d in dirs:
        (out / d).mkdir(parents=True, exist_ok=True)
    fixed = {
        ".gitignore": b"# dependencies\nnode_modules/\n# build output\n/dist/\n*.log\n",
        "README.md": b"# Benchmark workspace\n\nGenerated by bench/gen_workspace.py.\n",
        MARKER: f"seed={plan.seed}\n".encode(),
    }
    for name, data in fixed.items():
        _write(out / name, data)
        counts["files"] += 1
        counts["bytes"] += len(data)

    n = plan.files - len(fixed) - SYMLINKS
    sizes = _lognormal_sizes(rng, n, total - counts["bytes"], sigma=1.25)
    used: set[str] = set(fixed)
    text_paths: list[str] = []
    t0 = time.monotonic()
    for i, size in enumerate(sizes):
        folder = rng.choice(dirs)
        binary = rng.random() < BINARY_FRACTION
        ext = rng.choice(BINARY_EXTS) if binary else _pick_ext(rng)
        while True:
            rel = f"{folder}/{_ident(rng, rng.randint(1, 3))}{ext}"
            if rel not in used:
                break
        used.add(rel)
        if binary:
            data = _binary_file(rng, ext, size)
            counts["binary"] += 1
        else:
            data = _text_file(rng, pools[ext[1:]], size)
            text_paths.append(rel)
        exe = not binary and rng.random() < EXECUTABLE_FRACTION
        if exe:
            data = b"#!/bin/sh\n" + data[10:] if len(data) > 10 else b"#!/bin/sh\n"
            counts["executable"] += 1
        _write(out / rel, data, executable=exe)
        counts["files"] += 1
        counts["bytes"] += len(data)
        if progress and (i + 1) % 5000 == 0:
            print(f"  {i + 1}/{n} files, {time.monotonic() - t0:.1f}s", file=sys.stderr)

    # A few relative symlinks inside the workspace: agents' repos have them; both tools keep them.
    for j in range(SYMLINKS):
        target = rng.choice(text_paths)
        link = f"{rng.choice(dirs)}/link_{j}_{Path(target).name}"
        rel_target = os.path.relpath(target, os.path.dirname(link))
        (out / link).symlink_to(rel_target)
        counts["files"] += 1
        counts["symlinks"] += 1

    counts["node_modules_files"] = _node_modules(out, plan, pools["js"])
    return counts


def _node_modules(out: Path, plan: Plan, pool: list[str]) -> int:
    """An ignored ``node_modules/``: many small packages of small JS files."""
    rng = random.Random(f"{plan.seed}:node_modules")
    n = plan.node_modules_files
    if n <= 0:
        return 0
    packages = max(1, plan.node_modules_packages or n // 40)
    sizes = _lognormal_sizes(rng, n, n * 3000, sigma=1.0)
    names = [f"{_ident(rng, 1)}-{j}" for j in range(packages)]
    for i, size in enumerate(sizes):
        pkg = f"node_modules/{names[i % packages]}"
        sub = rng.choice(("", "lib/", "dist/", "src/", "lib/util/"))
        rel = f"{pkg}/{sub}{_ident(rng, 2)}-{i}.js"
        _write(out / rel, _text_file(rng, pool, size))
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "out", type=Path, help="folder to create (must be absent or empty, or use --force)"
    )
    ap.add_argument(
        "--files", type=int, default=50_000, help="files outside node_modules (default 50,000)"
    )
    ap.add_argument(
        "--size-mb", type=float, default=None, help="their total size (default 320 per 50,000)"
    )
    ap.add_argument("--folders", type=int, default=None, help="folders (default one per 50 files)")
    ap.add_argument(
        "--node-modules-files",
        type=int,
        default=None,
        help="ignored files (default 40%% of --files)",
    )
    ap.add_argument("--depth", type=int, default=5, help="folder nesting (default 5)")
    ap.add_argument(
        "--node-modules-packages", type=int, default=None,
        help="packages in node_modules/, about 6 folders each (default: one per 40 files)",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--force", action="store_true", help="replace OUT if it is a workspace made by this script"
    )
    a = ap.parse_args(argv)
    if a.files < SYMLINKS + 10:
        ap.error(f"--files must be at least {SYMLINKS + 10}")
    plan = Plan(
        files=a.files,
        size_mb=a.size_mb if a.size_mb is not None else 320.0 * a.files / 50_000,
        folders=a.folders if a.folders is not None else max(1, round(a.files / 50)),
        node_modules_files=(
            a.node_modules_files if a.node_modules_files is not None else round(a.files * 0.4)
        ),
        seed=a.seed,
        depth=a.depth,
        node_modules_packages=a.node_modules_packages,
    )
    out: Path = a.out.resolve()
    if out.exists() and any(out.iterdir()):
        if not a.force:
            print(f"error: {out} is not empty; pass --force to replace it", file=sys.stderr)
            return 2
        if not (out / MARKER).exists():
            print(
                f"error: {out} was not made by this script (no {MARKER}); refusing to delete it",
                file=sys.stderr,
            )
            return 2
        shutil.rmtree(out)
    t0 = time.monotonic()
    counts = generate(out, plan)
    mb = counts["bytes"] / 1024 / 1024
    print(
        f"{out}: {counts['files']} files, {mb:.1f} MB, {counts['folders']} folders, "
        f"{counts['binary']} binary, {counts['executable']} executable, "
        f"{counts['symlinks']} symlinks; "
        f"{counts['node_modules_files']} ignored in node_modules/; {time.monotonic() - t0:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
