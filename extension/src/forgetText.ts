/**
 * The words of Forget Pushed Session: what the person agrees to before this machine's
 * history on the remote is replaced (docs/SHARING.md, "Deleting a pushed session"). Pure,
 * so what a user is asked to agree to is tested.
 */

import { countOf } from './format';
import type { PushHistoryResult } from './protocol';

export interface ForgetConfirmation {
  message: string;
  detail: string;
  action: string;
}

/** The modal's text for forgetting session `title` (`id`). */
export function forgetConfirmation(title: string, id: string): ForgetConfirmation {
  return {
    message: `Forget “${title}” on the history remote?`,
    detail: [
      `Session ${id} will never be pushed again from this machine. This push replaces this ` +
        "machine's history on the remote by one without the session and its checkpoints " +
        '(only if the remote still has what this machine last saw there). This store keeps the session.',
      "What git's history means for it: the old commits become unreachable, but the server may " +
        'keep them until it collects garbage (GitHub and GitLab keep unreachable objects for a ' +
        'while; their support can purge them), and anyone who already pulled it keeps a copy. ' +
        'If the session held a secret, treat it as leaked: rotate it.',
    ].join('\n\n'),
    action: 'Forget and Push',
  };
}

/** The notification after the push. */
export function forgetSummary(title: string, r: PushHistoryResult): string {
  if (r.upToDate) {
    return `“${title}” will not be pushed again; the remote (${r.url}) had nothing of it to replace.`;
  }
  return `“${title}” forgotten: ${r.ref} at ${r.url} now holds ${countOf(r.sessions, 'session')} and ${countOf(r.checkpoints, 'checkpoint')} without it.`;
}
