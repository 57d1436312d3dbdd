import { editDistance } from '../config/edit-distance.js';
import type { Command } from './commands/command.js';

/** A slip of a few letters, not another word: at most 2 edits, or 1 in 4 letters of a longer name. */
const isSlip = (distance: number, name: string) => distance <= Math.max(2, Math.floor(name.length / 4));

/**
 * What to add when `words` (the command words typed, options left out) name no command: the
 * nearest command(s) by edit distance over as many words as each has (`clinets add` finds
 * `clients add`, `member list` finds `members list`); for a group typed alone (`members`) or
 * with a word near none of its commands, the commands of that group. Empty when nothing is near.
 */
export function unknownCommandHint(words: readonly string[], commands: readonly Command[]): string {
  const group = commands.filter((c) => c.path[0] === words[0]);
  const groupList = () => group.map((c) => c.path.join(' ')).join(', ');
  if (group.length > 0 && words.length === 1) return `"${words[0]}" needs a command: ${groupList()}.`;
  let best = Number.POSITIVE_INFINITY;
  let nearest: string[] = [];
  for (const command of commands) {
    const name = command.path.join(' ');
    const distance = editDistance(words.slice(0, command.path.length).join(' '), name);
    if (!isSlip(distance, name) || distance > best) continue;
    if (distance < best) nearest = [];
    best = distance;
    nearest.push(name);
  }
  if (nearest.length > 0) return `did you mean ${nearest.map((name) => `"${name}"`).join(' or ')}?`;
  return group.length > 0 ? `the "${words[0]}" commands are ${groupList()}.` : '';
}
