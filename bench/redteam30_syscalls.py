"""The workspace system calls of one rewind of 100 replaced files (4 folders), by strace:
whatever loads ``turnback`` (PYTHONPATH) is the code measured. A count, not a time: the
load does not move it. redteam30's fix must add none on a regular file's way.

    PYTHONPATH=server python bench/redteam30_syscalls.py [scratch folder]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

from turnback import Store

CALLS = "newfstatat,lstat,linkat,link,renameat,rename,renameat2,unlinkat,unlink,openat"


def main() -> None:
    base = tempfile.mkdtemp(dir=sys.argv[1] if len(sys.argv) > 1 else None)
    try:
        ws = os.path.join(base, "ws")
        for i in range(100):
            os.makedirs(os.path.join(ws, f"d{i % 4}"), exist_ok=True)
            with open(os.path.join(ws, f"d{i % 4}", f"f{i}.txt"), "w") as f:
                f.write("v1\n")
        with Store.open(ws, create=True) as store:
            cp = store.checkpoint().id
        for i in range(100):
            with open(os.path.join(ws, f"d{i % 4}", f"f{i}.txt"), "w") as f:
                f.write("v2\n")
        code = (f"import os\nfrom turnback import Store\ns = Store.open({ws!r})\n"
                f"os.write(2, b'MARK-START')\ns.rewind({cp!r})\nos.write(2, b'MARK-END')\n"
                "s.close()\n")
        trace = os.path.join(base, "trace")
        subprocess.run(["strace", "-f", "-e", f"trace={CALLS},write", "-o", trace,
                        sys.executable, "-c", code], check=True, capture_output=True)
        with open(trace) as f:
            lines = f.read().splitlines()
        start = next(i for i, line in enumerate(lines) if "MARK-START" in line)
        end = next(i for i, line in enumerate(lines) if "MARK-END" in line)
        counted: Counter[str] = Counter()
        for line in lines[start + 1:end]:
            call = line.split(None, 1)[-1].split("(")[0]
            # by path, or relative to a folder's descriptor: a file's name, a second name's
            ours = ws in line or re.search(r'"(f\d+\.txt|d\d|\.turnback-tmp-[^"]*)"', line)
            if call in CALLS.split(",") and ours and "/.turnback/" not in line:
                counted[call] += 1
        print(dict(sorted(counted.items())))
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
