/**
 * Whether a task is slow enough to earn a notification. VS Code keeps a progress
 * notification on screen for at least 800 ms from its start, so a rewind that failed at
 * once left "Turnback: Rewind…" (and the dry run's "checking what rewind would change…")
 * beside its error; a quick task now shows only in the status bar. Pure of VS Code.
 */

/** A task that has not settled after this long gets its progress notification. */
export const NOTIFY_AFTER_MS = 500;

/** Calls `show` once if `task` has not settled within `ms`; never after it settles. */
export function whenSlow(task: Promise<unknown>, ms: number, show: () => void): void {
  let settled = false;
  const timer = setTimeout(() => {
    if (!settled) {
      show();
    }
  }, ms);
  const done = (): void => {
    settled = true;
    clearTimeout(timer);
  };
  task.then(done, done);
}
