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
    await icon.click();
    // With one view in the container, its title stands in the sidebar's title bar.
    await this.page.locator(".part.sidebar .title-label", { hasText: /Turnback/ }).first().waitFor();
  }

  private rowsMatching(label: Text): Locator {
    return this.root.locator(".monaco-list-row", {
      has: this.page.locator(".label-name", { hasText: exact(label) }),
    });
  }

  /** All rendered rows' labels, top to bottom. */
  async labels(): Promise<string[]> {
    const names = await this.root.locator(".monaco-list-row .label-name").allInnerTexts();
    return names.map(plain);
  }

  /**
   * The row whose label is `label`, scrolled into view. Trees render only the
   * rows on screen, so this scrolls the list until the row appears.
   */
  async row(label: Text, timeoutMs = 20_000): Promise<Locator> {
    const deadline = Date.now() + timeoutMs;
    const list = this.root.locator(".monaco-list").first();
    let direction = 1;
    for (;;) {
      const row = this.rowsMatching(label).first();
      if ((await row.count()) > 0) {
        await row.scrollIntoViewIfNeeded();
        return row;
      }
      if (Date.now() > deadline) {
        throw new Error(`no row labelled ${String(label)} in the Turnback view; rows: ${(await this.labels()).join(" | ")}`);
      }
      // Sweep down, then back up, while waiting for the tree to load.
      await list.hover();
      await this.page.mouse.wheel(0, direction * 400);
      const atEnd = await list.evaluate((el, dir) => {
        const s = el.querySelector(".monaco-scrollable-element") ?? el;
        return dir > 0 ? s.scrollTop + s.clientHeight >= s.scrollHeight - 2 : s.scrollTop <= 0;
      }, direction);
      if (atEnd) direction = -direction;
      await this.page.waitForTimeout(150);
    }
  }

  async expand(label: Text): Promise<Locator> {
    const row = await this.row(label);
    if ((await row.getAttribute("aria-expanded")) === "false") {
      await row.locator(".monaco-tl-twistie").click();
    }
    await expectAttribute(row, "aria-expanded", "true");
    return row;
  }

  async collapse(label: Text): Promise<void> {
    const row = await this.row(label);
    if ((await row.getAttribute("aria-expanded")) === "true") {
      await row.locator(".monaco-tl-twistie").click();
    }
  }

  /** Clicks an inline action (the icons shown on a hovered row) by its title. */
  async inlineAction(label: Text, action: string): Promise<void> {
    const row = await this.row(label);
    await row.hover();
    const button = row.locator(`.actions .action-label[aria-label="${action}"]`);
    await button.click();
  }
}

async function expectAttribute(locator: Locator, name: string, value: string, timeoutMs = 10_000): Promise<void> {
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

/** Waits for the toast and returns its message. */
export async function toastText(page: Page, message: Text, timeoutMs = 30_000): Promise<string> {
  const t = toast(page, message).first();
  await t.waitFor({ timeout: timeoutMs });
  return plain(await t.locator(".notification-list-item-message").innerText());
}

export async function clickToastButton(page: Page, message: Text, button: string): Promise<void> {
  await toast(page, message).first().locator(".monaco-button", { hasText: exact(button) }).click();
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
export async function readDiff(page: Page): Promise<DiffSides> {
  const diff = page.locator(".editor-group-container.active .monaco-diff-editor").first();
  await diff.waitFor({ timeout: 30_000 });
  const original = diff.locator(".editor.original .view-lines");
  const modified = diff.locator(".editor.modified .view-lines");
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
    if (sides.original.trim() !== "" || sides.modified.trim() !== "") break;
    await page.waitForTimeout(200);
  } while (Date.now() < deadline);
  return sides;
}
