// The parts of the VS Code workbench the suite reads and clicks, found the
// way a person finds them: by the text they show. Selectors name VS Code's own
// DOM classes (stable across releases for years: monaco-list-row, label-name,
// notification-toast, monaco-dialog-box, editor.original/modified).

import type { Locator, Page } from "playwright-core";
import { escapeRegExp, runCommand } from "./browser.ts";

/** Exactly this text, or anything a RegExp matches. */
export type Text = string | RegExp;

function exact(text: Text): RegExp {
  return typeof text === "string" ? new RegExp(`^${escapeRegExp(text)}$`) : text;
}

/** The text of a rendered editor or label: VS Code renders spaces as U+00A0. */
export function plain(text: string): string {
  return text.replace(/\u00a0/g, " ");
}

export class TreeView {
  readonly page: Page;
  readonly root: Locator;

  constructor(page: Page) {
    this.page = page;
    // The sidebar shows one view container at a time: Turnback's, once opened.
    this.root = page.locator(".part.sidebar");
  }

  /** Opens the Turnback view container from the activity bar. */
  async open(): Promise<void> {
    const icon = this.page.locator(".activitybar .action-item a[aria-label^='Turnback']").first();
    await icon.waitFor({ timeout: 60_000 });
    // The container's title stands in the sidebar's title bar. Clicking the icon of the
    // container already shown hides the sidebar: click only when it is not shown.
    const title = this.page.locator(".part.sidebar .title-label", { hasText: /Turnback/ }).first();
    if (!(await title.isVisible())) {
      await icon.click();
    }
    await title.waitFor();
    await this.widen(480);
  }

  /** Drags the sash at the sidebar's right edge, so labels (and screenshots) are readable. */
  async widen(width: number): Promise<void> {
    const box = await this.root.boundingBox();
    if (box === null || box.width >= width) return;
    const y = box.y + box.height / 2;
    await this.page.mouse.move(box.x + box.width + 1, y);
    await this.page.mouse.down();
    await this.page.mouse.move(box.x + width, y, { steps: 5 });
    await this.page.mouse.up();
  }

  private rowsMatching(label: Text): Locator {
    // Sticky-scroll copies of parent rows are left out: only the tree's own rows.
    return this.root.locator(".monaco-list-row:not(.monaco-tree-sticky-row)", {
      has: this.page.locator(".label-name", { hasText: exact(label) }),
    });
  }

  /** All rendered rows' labels (rendering order, not necessarily top to bottom). */
  async labels(): Promise<string[]> {
    const names = await this.root
      .locator(".monaco-list-row:not(.monaco-tree-sticky-row) .label-name")
      .allInnerTexts();
    return names.map(plain);
  }

  private async findRendered(label: Text): Promise<Locator | undefined> {
    const row = this.rowsMatching(label).first();
    return (await row.count()) > 0 ? row : undefined;
  }

  /**
   * The row whose label is `label`, scrolled into view. Trees render only the
   * rows on screen, so this pages through the list (keyboard focus, which
   * selects nothing and runs no command) until the row appears, and keeps
   * trying until the tree has loaded it or `timeoutMs` passes.
   */
  async row(label: Text, timeoutMs = 20_000): Promise<Locator> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const row = (await this.findRendered(label)) ?? (await this.pageThrough(label));
      if (row !== undefined) {
        await row.scrollIntoViewIfNeeded();
        return row;
      }
      if (Date.now() > deadline) {
        throw new Error(`no row labelled ${String(label)} in the Turnback view; rows: ${(await this.labels()).join(" | ")}`);
      }
      await this.page.waitForTimeout(250);
    }
  }

  /** Moves keyboard focus from the first row down a page at a time, looking for the row. */
  private async pageThrough(label: Text): Promise<Locator | undefined> {
    const rows = this.root.locator(".monaco-list-row:not(.monaco-tree-sticky-row)");
    if ((await rows.count()) === 0) return undefined; // not loaded yet
    await this.root.locator(".monaco-list").first().focus();
    await this.page.keyboard.press("Home");
    let last: string | null = null;
    for (let pages = 0; pages < 200; pages += 1) {
      const row = await this.findRendered(label);
      if (row !== undefined) return row;
      await this.page.keyboard.press("PageDown");
      const focused = this.root.locator(".monaco-list-row.focused").first();
      // a refresh of the tree may re-render the rows between the count and the read: then
      // the focused row is gone, and the caller's loop (`row`) starts paging again
      const index = (await focused.count()) > 0
        ? await focused.getAttribute("data-index", { timeout: 1_000 }).catch(() => null)
        : null;
      if (index === null || index === last) break; // no focus, or the end of the list
      last = index;
    }
    return this.findRendered(label);
  }

  /**
   * Expands a row. A refresh of the tree that lands while the row's children are
   * still being fetched (a didChange right after the row appeared) can drop the
   * expansion, as it would for a person's click: then the twistie is clicked again.
   */
  async expand(label: Text): Promise<Locator> {
    for (let attempt = 0; ; attempt += 1) {
      const row = await this.row(label);
      if ((await row.getAttribute("aria-expanded")) === "false") {
        await row.locator(".monaco-tl-twistie").click();
      }
      try {
        await expectAttribute(row, "aria-expanded", "true", attempt < 2 ? 3_000 : 10_000);
        return row;
      } catch (err) {
        if (attempt >= 2) throw err;
      }
    }
  }

  /**
   * The row `label` under the row `parent`, which is expanded first. If a refresh of
   * the tree collapsed the parent again before its child was found, it is expanded
   * again, as a person would; the child must still be there.
   */
  async childOf(parent: Text, label: Text): Promise<Locator> {
    for (let attempt = 0; ; attempt += 1) {
      await this.expand(parent);
      try {
        return await this.row(label, attempt < 2 ? 5_000 : 20_000);
      } catch (err) {
        if (attempt >= 2) throw err;
      }
    }
  }

  async collapse(label: Text): Promise<void> {
    const row = await this.row(label);
    if ((await row.getAttribute("aria-expanded")) === "true") {
      await row.locator(".monaco-tl-twistie").click();
    }
  }

  /** Runs an action of a row's context menu (right click) by its title. */
  async contextAction(label: Text, action: string): Promise<void> {
    const row = await this.row(label);
    await row.click({ button: "right" });
    await this.page.locator(".monaco-menu .action-item:not(.disabled) .action-label", { hasText: exact(action) }).first().click();
  }

  /** Clicks an inline action (the icons shown on a hovered row) by its title. */
  async inlineAction(label: Text, action: string): Promise<void> {
    const row = await this.row(label);
    await row.hover();
    const button = row.locator(`.actions .action-label[aria-label="${action}"]`);
    await button.click();
  }
}

export async function expectAttribute(locator: Locator, name: string, value: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await locator.getAttribute(name)) !== value) {
    if (Date.now() > deadline) throw new Error(`${name} never became ${value}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Picks an entry of the open quick pick by its label. */
export async function quickPick(page: Page, label: Text): Promise<void> {
  const widget = page.locator(".quick-input-widget");
  await widget.waitFor();
  const item = widget.locator(".monaco-list-row", {
    has: page.locator(".label-name", { hasText: exact(label) }),
  });
  await item.first().click();
}

/**
 * Opens `path` (relative to the folder) with Quick Open and waits until it is the active
 * editor. Quick Open lists recently opened files before its search answers, so a row
 * naming the file can show while the list is still being replaced; an Enter pressed then
 * can be lost, leaving the picker open to swallow the keys meant for the editor. So the
 * Enter waits for the focused row to name the file, and is pressed again while the picker
 * stays open with that row focused.
 */
export async function openFile(page: Page, path: string): Promise<void> {
  const name = path.split("/").pop() ?? path;
  await page.keyboard.press("Control+P");
  const widget = page.locator(".quick-input-widget");
  const input = widget.locator("input.input");
  await input.waitFor();
  await input.fill(path);
  const focused = widget.locator(".quick-input-list .monaco-list-row.focused", {
    has: page.locator(".label-name", { hasText: exact(name) }),
  });
  const deadline = Date.now() + 30_000;
  await focused.waitFor({ timeout: 30_000 });
  while (await widget.isVisible()) {
    if (Date.now() > deadline) throw new Error(`Quick Open never opened ${path}`);
    if (await focused.isVisible()) await page.keyboard.press("Enter");
    await widget.waitFor({ state: "hidden", timeout: 5_000 }).catch(() => undefined);
  }
  // the window's title starts with the active editor's file name
  await page.waitForFunction((n) => document.title.startsWith(`${n} `), name, { timeout: Math.max(1, deadline - Date.now()) });
  await page.locator(".editor-group-container.active .monaco-editor.focused .view-lines").waitFor();
}

/**
 * Moves the cursor to 1-based `line` with Go to Line and waits until the active editor's
 * cursor is there and the picker has closed: an Enter that the picker takes late would
 * otherwise move the cursor after the next key, and a key pressed while the picker is
 * still open goes to it instead of the editor.
 */
export async function goToLine(page: Page, line: number): Promise<void> {
  await page.keyboard.press("Control+G");
  const widget = page.locator(".quick-input-widget");
  await widget.locator("input.input").waitFor();
  await page.keyboard.type(String(line));
  await page.keyboard.press("Enter");
  await widget.waitFor({ state: "hidden", timeout: 30_000 });
  await page.waitForFunction(
    (n) => document.querySelector(".editor-group-container.active .monaco-editor .active-line-number")?.textContent === n,
    String(line),
    { timeout: 30_000 },
  );
}

/** Types into the open input box and accepts it. */
export async function inputBox(page: Page, text: string): Promise<void> {
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor();
  await input.fill(text);
  await page.keyboard.press("Enter");
}

/** The modal dialog: its message and detail text, then a click on `button`. */
export async function answerDialog(page: Page, button: string): Promise<string> {
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor();
  const text = plain(await dialog.innerText());
  await dialog.locator(".dialog-buttons .monaco-button", { hasText: exact(button) }).click();
  await dialog.waitFor({ state: "detached" });
  return text;
}

/** The notification toast whose message matches `message`. */
export function toast(page: Page, message: Text): Locator {
  return page.locator(".notifications-toasts .notification-toast", {
    has: page.locator(".notification-list-item-message", { hasText: message }),
  });
}

/**
 * Waits (up to `timeoutMs`) until no Turnback progress toast ("Turnback: Rewind…") is on
 * screen: one may show for a slow task and then goes with it, never outliving it for long.
 */
export async function noProgressNotification(page: Page, timeoutMs = 5_000): Promise<void> {
  await toast(page, /^Turnback: .*…$/).first().waitFor({ state: "detached", timeout: timeoutMs });
}

/** Waits for the toast and returns its message. */
export async function toastText(page: Page, message: Text, timeoutMs = 30_000): Promise<string> {
  const t = toast(page, message).first();
  await t.waitFor({ timeout: timeoutMs });
  return plain(await t.locator(".notification-list-item-message").innerText());
}

/**
 * Waits for a notification and returns its message: as a toast, or in the Notifications
 * center. VS Code files some notifications without a toast (seen after Restore This
 * Version's Undo: the notification was in the center, no toast came); the user finds
 * them behind the bell, and so does this.
 */
export async function notificationText(page: Page, message: Text, timeoutMs = 30_000): Promise<string> {
  const t = toast(page, message).first();
  try {
    await t.waitFor({ timeout: 5_000 });
    return plain(await t.locator(".notification-list-item-message").innerText());
  } catch {
    // not as a toast: look in the center
  }
  await runCommand(page, "Notifications: Show Notifications");
  const item = page
    .locator(".notifications-center .notification-list-item", {
      has: page.locator(".notification-list-item-message", { hasText: message }),
    })
    .first();
  await item.waitFor({ timeout: timeoutMs });
  const text = plain(await item.locator(".notification-list-item-message").innerText());
  await runCommand(page, "Notifications: Hide Notifications");
  return text;
}

/**
 * Clicks a notification's button: on its toast, or, once VS Code has taken the toast away
 * (an information toast goes after 15 s; the disk checks before the click took longer on a
 * loaded machine), in the Notifications center, where the user finds it then.
 */
export async function clickToastButton(page: Page, message: Text, button: string): Promise<void> {
  const onToast = toast(page, message).first().locator(".monaco-button", { hasText: exact(button) });
  if ((await onToast.count()) > 0) {
    try {
      await onToast.click({ timeout: 5_000 });
      return;
    } catch {
      // gone between the look and the click: the center has it
    }
  }
  await runCommand(page, "Notifications: Show Notifications");
  const item = page
    .locator(".notifications-center .notification-list-item", {
      has: page.locator(".notification-list-item-message", { hasText: message }),
    })
    .first();
  await item.locator(".monaco-button", { hasText: exact(button) }).click();
  // the click may close the center itself; then the palette has no "Hide Notifications",
  // and waiting for it failed a step whose click had worked
  await page
    .locator(".notifications-center.visible")
    .waitFor({ state: "hidden", timeout: 3_000 })
    .catch(() => runCommand(page, "Notifications: Hide Notifications"));
}

/** Dismisses every notification, so the next one a test waits for is new. */
export async function clearNotifications(page: Page): Promise<void> {
  await runCommand(page, "Notifications: Clear All Notifications");
  await page.locator(".notifications-toasts .notification-toast").first().waitFor({ state: "detached" });
}

export interface DiffSides {
  title: string;
  original: string;
  modified: string;
}

/** The active diff editor's tab title and the text of both sides. */
/**
 * Reads the active diff editor once its tab title matches ``title`` (the editor
 * a click opens replaces the one before it a moment later) and its text arrived:
 * by default either side's, or what ``ready`` asks for (each side comes from its
 * own request to the content provider, so one may show before the other).
 */
export async function readDiff(
  page: Page,
  title: RegExp,
  ready: (sides: DiffSides) => boolean = (s) => s.original.trim() !== "" || s.modified.trim() !== "",
): Promise<DiffSides> {
  const diff = page.locator(".editor-group-container.active .monaco-diff-editor").first();
  await diff.waitFor({ timeout: 30_000 });
  // The editors' own line layers (an inline view would add deleted-line zones).
  const original = diff.locator(".editor.original .view-lines:not(.line-delete)");
  const modified = diff.locator(".editor.modified .view-lines:not(.line-delete)");
  await original.waitFor();
  await modified.waitFor();
  // Contents come from the extension's content provider: wait for text.
  const deadline = Date.now() + 15_000;
  let sides: DiffSides;
  do {
    sides = {
      title: plain(await page.locator(".editor-group-container.active .tab.active .label-name").first().innerText()),
      original: plain(await original.innerText()),
      modified: plain(await modified.innerText()),
    };
    if (title.test(sides.title) && ready(sides)) break;
    await page.waitForTimeout(200);
  } while (Date.now() < deadline);
  return sides;
}
