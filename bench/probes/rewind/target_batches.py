"""Where an at-once rewind's targets are stored: which pack or log, and how much of its
block a read decodes to reach each (``off + length``), over ``atonce_parts.py``'s rounds.

    python bench/probes/rewind/target_batches.py WORKSPACE ROUNDS [--again] [--src OTHER/server]

Rounds as ``atonce_parts.py --raw-held`` runs them (checkpoint after 10 edits, 10 more
edits, at-once rewind to that checkpoint; ``--again``: the second edits to the same files,
the log folded between). Prints the count of targets per stored batch (the first
checkpoint's pack, or a later one), and the mean bytes decoded to reach a target.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]  # bench/
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))
sys.path.insert(0, str(HERE))

from edits import Editor  # noqa: E402

from turnback.rewind import apply  # noqa: E402
from turnback.store.facade import Store  # noqa: E402


def main() -> int:
    ws, rounds, again = Path(sys.argv[1]), int(sys.argv[2]), "--again" in sys.argv
    store = Store.open(ws)
    store.objects.raw_held = True
    store.checkpoint(label="walk")
    store.objects.packs.refresh(whole=True)
    walk_packs = store.objects.packs.packs()  # the first checkpoint's, made beforehand
    seen: list[tuple[str, int, int]] = []
    preload = apply.Applier.preload

    def noted(self: Any, plan: Any) -> None:
        for e in {**plan.write, **plan.create}.values():
            loc = self.objects.packs.locate(e.hash)
            if loc is not None:
                seen.append((loc.pack, loc.off + loc.length, e.size))
        preload(self, plan)

    apply.Applier.preload = noted  # type: ignore[method-assign]
    ed = Editor(ws, seed=7)
    for _ in range(rounds):
        cp = store.checkpoint(label="at once", dirty=set(ed.edit(10)))
        if again:
            store.fold_held()
            edited = set(ed.edit_again())
        else:
            edited = set(ed.edit(10))
        store.rewind(cp.id, dirty=edited, finish_later=True)
        store.finish_rewind()
    store.close()
    where = Counter("the first checkpoint's pack" if p in walk_packs else "a later batch"
                    for p, _, _ in seen)
    print(f"{len(seen)} targets over {rounds} rounds: {dict(where)}; decoded to reach one: "
          f"{sum(n for _, n, _ in seen) / len(seen):.0f} bytes on average, for "
          f"{sum(s for _, _, s in seen) / len(seen):.0f}-byte files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
