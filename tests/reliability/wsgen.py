"""Random workspaces and random edits for the reliability trials (seeded: reproducible)."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

from wsutil import Picture, write

IGNORED = (b".env", b"node_modules/")


def make_workspace(ws: Path, rng: random.Random, files: int = 12) -> None:
    """A small project: text and binary files, an executable, symlinks, ignored files."""
    ws.mkdir(parents=True, exist_ok=True)
    write(ws, ".gitignore", "node_modules/\n.env\n")
    write(ws, ".env", "SECRET=1\n")
    write(ws, "node_modules/dep/index.js", "module.exports = 1\n")
    for i in range(files):
        folder = rng.choice(["", "src/", "src/lib/", "docs/", "assets/"])
        if rng.random() < 0.25:
            data = rng.randbytes(rng.choice([10, 300, 5000, 70_000]))
        else:
            data = "".join(f"line {j} of file {i}\n" for j in range(rng.randint(0, 40))).encode()
        write(ws, f"{folder}f{i}.{'bin' if data[:1] == b'x' else 'txt'}", data,
              exec_=rng.random() < 0.1)
    write(ws, "run.sh", "#!/bin/sh\necho run\n", exec_=True)
    os.symlink("run.sh", ws / "run-link")


def edit_workspace(ws: Path, rng: random.Random, n: int = 8) -> None:
    """Edits, creations, deletions, chmods, symlinks, file<->folder swaps, ignored changes."""
    for _ in range(n):
        files = [p for p in ws.rglob("*") if p.is_file() and not p.is_symlink()
                 and ".turnback" not in p.parts and "node_modules" not in p.parts
                 and p.name not in (".env", ".gitignore")]
        what = rng.choice(["edit", "edit", "create", "delete", "chmod", "link", "swap", "dir"])
        if what == "edit" and files:
            p = rng.choice(files)
            p.write_bytes(p.read_bytes() + rng.randbytes(rng.randint(1, 2000)))
        elif what == "create":
            write(ws, f"new/n{rng.randrange(10**6)}.dat", rng.randbytes(rng.randint(0, 3000)))
        elif what == "delete" and files:
            rng.choice(files).unlink()
        elif what == "chmod" and files:
            p = rng.choice(files)
            p.chmod(p.stat().st_mode ^ 0o100)
        elif what == "link":
            target = ws / f"l{rng.randrange(1000)}"
            if not os.path.lexists(target):
                os.symlink(rng.choice(["src", "missing", "run.sh", "../outside"]), target)
        elif what == "swap" and files:
            p = rng.choice(files)  # a file becomes a folder of the same name
            p.unlink()
            write(p, "inner.txt", "was a file\n")
        elif what == "dir":
            d = ws / rng.choice(["src", "docs", "assets"])
            if d.is_dir() and not d.is_symlink():  # a folder becomes a file
                shutil.rmtree(d)
                d.write_bytes(b"was a folder\n")
    write(ws, ".env", f"SECRET={rng.randrange(10**6)}\n")
    write(ws, "node_modules/dep/index.js", f"module.exports = {rng.randrange(100)}\n")


def is_ignored(rel: bytes) -> bool:
    return rel == b".env" or rel.startswith(b"node_modules/")


def tracked(pic: Picture) -> Picture:
    return {k: v for k, v in pic.items() if not is_ignored(k)}


def ignored(pic: Picture) -> Picture:
    return {k: v for k, v in pic.items() if is_ignored(k)}
