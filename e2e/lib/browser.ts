// Headless Debian Chromium driven by playwright-core (no browser download),
// with helpers for the VS Code workbench that the tests share.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";

export const CHROMIUM = process.env["CHROMIUM_BIN"] ?? "/usr/bin/chromium";

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** Opens the workbench at `url` and waits until the explorer has rendered. */
export async function openWorkbench(browser: Browser, url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(url);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  await page.locator(".explorer-folders-view .monaco-list-row").first().waitFor({ timeout: 60_000 });
  return page;
}

export class Shots {
  private n = 0;
  private readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
  }

  /** Saves a numbered screenshot named after the step; returns its path. */
  async take(page: Page, name: string): Promise<string> {
    this.n += 1;
    const file = join(this.dir, `${String(this.n).padStart(2, "0")}-${name}.png`);
    await page.screenshot({ path: file });
    return file;
  }
}

/** Runs a command through the command palette by its title. */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press("Control+Shift+P");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor();
  await input.fill(`>${title}`);
  const item = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  await item.waitFor();
  await page.keyboard.press("Enter");
}

/** The rows of the explorer's file tree, by their label text. */
export function explorerRow(page: Page, name: string): Locator {
  return page.locator(".explorer-folders-view .monaco-list-row", {
    has: page.locator(".label-name", { hasText: new RegExp(`^${escapeRegExp(name)}$`) }),
  });
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
