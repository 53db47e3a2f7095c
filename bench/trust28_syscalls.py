"""The workspace system calls of one rewind that creates 100 files (4 folders) and of one
that replaces 100, by strace: whatever loads ``turnback`` (PYTHONPATH) is the code
measured. A count, not a time: the load does not move it. trust28's rename that never
replaces (``renameat2(RENAME_NOREPLACE)`` for a create) is to add none a file. Then one
no-op ``checkpoint()`` of a store named with ``--store`` (outside the workspace): the look
at its root before the commit (trust28's third item) costs what it costs there.

    PYTHONPATH=server python bench/trust28_syscalls.py [scratch folder]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from turnback import Store

CALLS = "newfstatat,lstat,linkat,link,renameat,rename,renameat2,unlinkat,unlink,openat"


def _counted(base: str, ws: str, cp: str, store: str | None = None) -> dict[str, int]:
    step = f"s.rewind({cp!r})" if store is None else "s.checkpoint()"
    code = (f"import os\nfrom pathlib import Path\nfrom turnback import Store\n"
            f"s = Store.open({ws!r}, store_dir={store!r} and Path({store!r}))\n"
            f"os.write(2, b'MARK-START')\n{step}\nos.write(2, b'MARK-END')\n"
            "s.close()\n")
    trace = os.path.join(base, "trace")
    subprocess.run(["strace", "-f", "-o", trace, sys.executable, "-c", code],
                   check=True, capture_output=True)
    with open(trace) as f:
        lines = f.read().splitlines()
    start = next(i for i, line in enumerate(lines) if "MARK-START" in line)
    end = next(i for i, line in enumerate(lines) if "MARK-END" in line)
    counted: Counter[str] = Counter()
    for line in lines[start + 1:end]:
        call = line.split(None, 1)[-1].split("(")[0]
        counted["(all calls)"] += 1
        if store is not None:
            if f'"{store}"' in line:
                counted[f"{call} on the store's root"] += 1
            continue
        # by path, or relative to a folder's descriptor: a file's name, a temporary name's
        ours = ws in line or re.search(r'"(f\d+\.txt|d\d|\.turnback-tmp-[^"]*)"', line)
        if call in CALLS.split(",") and ours and "/.turnback/" not in line:
            counted[call] += 1
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
