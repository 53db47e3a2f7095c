/**
 * Checkpoint ids inside store text, shown as the checkpoints' names. The store labels a
 * rewind's safety checkpoint "before rewind to ab54a072d588" and summarises a rewind event
 * as "rewind to ab54a072d588 (files)": an id no one can place. Here the id becomes the
 * name of the checkpoint it starts (“Tests pass”), recursively a few levels. A safety
 * checkpoint the server marks (`safetyOf`, turnback/checkpoints) is said in the words the
 * server sends with it ("before rewind to “Tests pass”", "before undo of rewind to “Tests
 * pass”"): they are written once, in the server (store/safety_names.py), for the CLI and
 * the editor alike, so the two cannot drift. An id that names no known checkpoint (or more
 * than one) is left as it is. Pure.
 */

import type { Checkpoint, FileVersion, SessionEvent, Step } from './protocol';
import { checkpointTitle } from './tree/labels';

/** How the store writes an id into a label: at least 12 lowercase hex digits, a word of its own. */
const HEX_ID = /\b[0-9a-f]{12,64}\b/g;
/** The store prints 12 characters; ids are indexed by those. */
const KEY = 12;
/** A safety checkpoint of an undo of an undo of …: names nest this deep, then stay ids. */
const DEPTH = 3;
/**
 * Of a named checkpoint's own label only this much is named in turn (its title shows 80
 * characters): a store label of a million ids, each naming a checkpoint labelled the same,
 * would otherwise be read a million times over at every level.
 */
const INNER = 200;
/** The server's words are store text too: bounded as a label's start (they say ~110). */
const WORDS = 400;

type Named = Pick<Checkpoint, 'id' | 'label' | 'safetyOf'>;

export class CheckpointNames {
  private readonly byKey = new Map<string, Named[]>();
  private readonly byId = new Map<string, Named>();

  constructor(all: readonly Named[]) {
    for (const cp of all) {
      this.byId.set(cp.id, cp);
      const key = cp.id.slice(0, KEY);
      const list = this.byKey.get(key);
      if (list === undefined) {
        this.byKey.set(key, [cp]);
      } else {
        list.push(cp);
      }
    }
  }

  /** `text` with each id of a known checkpoint replaced by “its title”. */
  name(text: string, depth = DEPTH): string {
    if (depth <= 0) {
      return text;
    }
    return text.replace(HEX_ID, (token) => {
      const cp = this.unique(token);
      return cp === undefined ? token : `“${this.title(cp, depth)}”`;
    });
  }

  /** The one known checkpoint whose id starts with `token`. */
  private unique(token: string): Named | undefined {
    const found = (this.byKey.get(token.slice(0, KEY)) ?? []).filter((cp) => cp.id.startsWith(token));
    return found.length === 1 ? found[0] : undefined;
  }

  /** A named checkpoint's title, its own label named in turn (one level less). */
  private title(cp: Named, depth: number): string {
    const words = this.safetyWords(cp);
    return checkpointTitle({ id: cp.id, label: words ?? this.name(cp.label.slice(0, INNER), depth - 1) });
  }

  /**
   * What a safety checkpoint was taken before, in the server's words (`safetyOf.words`);
   * undefined for any other checkpoint, or a mark without words (then its label is named
   * as any other). Its own or else the listed one's: a checkpoint inside another answer
   * (turnback/fileHistory's) has its words since ux37, a server before that sent its record's
   * `safetyOf`, which has none.
   */
  private safetyWords(cp: Pick<Checkpoint, 'safetyOf'> & { id?: string }): string | undefined {
    const listed = cp.id !== undefined ? this.byId.get(cp.id)?.safetyOf : undefined;
    for (const words of [cp.safetyOf?.words, listed?.words]) {
      if (typeof words === 'string' && words.trim().length > 0) {
        return words.slice(0, WORDS);
      }
    }
    return undefined;
  }

  checkpoint<T extends Pick<Checkpoint, 'label' | 'safetyOf'> & { id?: string }>(cp: T): T {
    const label = this.safetyWords(cp) ?? this.name(cp.label);
    return label === cp.label ? cp : { ...cp, label };
  }

  /** A rewind step's or a safety checkpoint step's label. */
  step(s: Step): Step {
    const label = this.name(s.label);
    return label === s.label ? s : { ...s, label };
  }

  /** A rewind event's summary (a checkpoint event is named by its checkpoint already). */
  event(e: SessionEvent): SessionEvent {
    if (e.summary === undefined) {
      return e;
    }
    const summary = this.name(e.summary);
    return summary === e.summary ? e : { ...e, summary };
  }

  version(v: FileVersion): FileVersion {
    const checkpoint = this.checkpoint(v.checkpoint);
    const previous = v.previous !== null ? this.byId.get(v.previous) : undefined;
    const previousLabel =
      v.previousLabel === null
        ? null
        : previous !== undefined
          ? this.checkpoint({ ...previous, label: v.previousLabel }).label
          : this.name(v.previousLabel);
    return checkpoint === v.checkpoint && previousLabel === v.previousLabel ? v : { ...v, checkpoint, previousLabel };
  }
}
