"""The workspace system calls of one rewind that creates 100 files (4 folders) and of one
that replaces 100, by strace: whatever loads ``turnback`` (PYTHONPATH) is the code
measured. A count, not a time: the load does not move it. trust28's rename that never
replaces (``renameat2(RENAME_NOREPLACE)`` for a create) is to add none a file. Then one
no-op ``checkpoint()`` of a store named with ``--store`` (outside the workspace): the look
at its root before the commit (trust28's third item) costs what it costs there.

    PYTHONPATH=server python bench/probes/rewind/trust28_syscalls.py [scratch folder]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from strace_counts import call_of, on_workspace, traced_step

from turnback import Store


def _counted(base: str, ws: str, cp: str, store: str | None = None) -> dict[str, int]:
    step = f"s.rewind({cp!r})" if store is None else "s.checkpoint()"
    counted: Counter[str] = Counter()
    for line in traced_step(base, ws, step, store):
        counted["(all calls)"] += 1
        if store is not None:
            if f'"{store}"' in line:
                counted[f"{call_of(line)} on the store's root"] += 1
            continue
        if on_workspace(line, ws):
            counted[call_of(line)] += 1
    return dict(sorted(counted.items()))


def main() -> None:
    base = tempfile.mkdtemp(dir=sys.argv[1] if len(sys.argv) > 1 else None)
    try:
        for case in ("create", "replace"):
            ws = os.path.join(base, case)
            files = [os.path.join(ws, f"d{i % 4}", f"f{i}.txt") for i in range(100)]
            for p in files:
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w") as f:
                    f.write("v1\n")
            with Store.open(ws, create=True) as store:
                cp = store.checkpoint().id
            for p in files:
                if case == "create":
                    os.unlink(p)
                else:
                    with open(p, "w") as f:
                        f.write("v2\n")
            print(case, _counted(base, ws, cp))
        ws, store = os.path.join(base, "named"), os.path.join(base, "named-store")
        os.makedirs(ws)
        for i in range(100):
            with open(os.path.join(ws, f"f{i}.txt"), "w") as f:
                f.write("v1\n")
        with Store.open(ws, create=True, store_dir=Path(store)) as st:
            st.checkpoint()
        print("checkpoint, --store", _counted(base, ws, "", store))
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
