/**
 * Whether a clients file may become the registry (docs/operations.md, "The clients file
 * across machines"). The database records each revision of the registry (its number and
 * content hash); a file is applied only when it is newer than the current revision or an
 * edit of it, never when it is an older copy or a different line of edits, so a machine with
 * a stale file cannot unregister clients that another machine added.
 */

/** What a file holds, as far as the judgement goes. */
export interface FileState {
  /** False when there is no file at all: such a process changes nothing and serves the database's registry. */
  exists: boolean;
  /** The revision the file declares: written by the admin commands, absent in a hand-written file. */
  revision: number | undefined;
  contentHash: string;
  clientIds: readonly string[];
}

/** The current revision recorded in the database. */
export interface RegistryHead {
  revision: number;
  contentHash: string;
  appliedAt: Date;
  appliedBy: string;
}

/** The database before any revision was recorded (a database older than revisions): its rows as they are. */
export interface UnrecordedRegistry {
  contentHash: string;
  clientIds: readonly string[];
}

/**
 * What a running server knows beyond the file: the file as it last read it while the file was
 * the registry's current content. A change from there is an edit of the registry.
 */
export interface ParentFile {
  contentHash: string;
  revision: number | undefined;
}

export type Verdict =
  /** The file holds what the registry holds. */
  | { kind: 'current' }
  /** Apply the file as `revision`. */
  | { kind: 'apply'; revision: number; why: 'newer' | 'edited' | 'first' }
  /** There is no file, and the registry holds clients: nothing to apply, nothing to warn about. */
  | { kind: 'absent' }
  /** Refused: the registry has moved past this file (`earlier`: the revision whose content the file holds). */
  | { kind: 'older'; earlier?: number }
  /** Refused: neither the current content, nor newer, nor an edit of it. `removes`: clients of an unrecorded registry the file lacks. */
  | { kind: 'diverging'; removes?: readonly string[] };

export interface Judged {
  verdict: Verdict;
  /** The current revision the file was judged against (before any apply). */
  head: RegistryHead | undefined;
}

/**
 * The rules, in order (with a recorded revision R of content H):
 * 1. the file's content is H: current;
 * 2. it declares a revision above R: newer (how a deliberate replacement is made);
 * 3. a running server saw the file at content H, and it changed without declaring a lower
 *    revision than before: edited, applied as R + 1;
 * 4. it declares R itself with other content (edited while no server watched it): edited;
 * 5. it declares a lower revision, or holds the content of an earlier one: older;
 * 6. anything else: diverging.
 * With no revision recorded yet, a file that keeps every client of the database becomes
 * revision 1 (or the one it declares); one that would remove some is refused. No file at all
 * is no registry: it never empties the database's.
 */
export function judgeClientsFile(
  file: FileState,
  registry: RegistryHead | UnrecordedRegistry,
  known: { parent?: ParentFile; earlier?: number } = {},
): Verdict {
  if (file.contentHash === registry.contentHash) return { kind: 'current' };
  if (!file.exists) return { kind: 'absent' };
  if (!('revision' in registry)) {
    if (file.revision !== undefined) return { kind: 'apply', revision: file.revision, why: 'newer' };
    const kept = new Set(file.clientIds);
    const removes = registry.clientIds.filter((id) => !kept.has(id));
    if (removes.length === 0 || known.parent?.contentHash === registry.contentHash) return { kind: 'apply', revision: 1, why: 'first' };
    return { kind: 'diverging', removes };
  }
  if (file.revision !== undefined && file.revision > registry.revision) return { kind: 'apply', revision: file.revision, why: 'newer' };
  const { parent } = known;
  const droppedRevision = file.revision !== undefined && parent?.revision !== undefined && file.revision < parent.revision;
  if (parent?.contentHash === registry.contentHash && !droppedRevision)
    return { kind: 'apply', revision: registry.revision + 1, why: 'edited' };
  if (file.revision === registry.revision) return { kind: 'apply', revision: registry.revision + 1, why: 'edited' };
  if (file.revision !== undefined || known.earlier !== undefined)
    return { kind: 'older', ...(known.earlier === undefined ? {} : { earlier: known.earlier }) };
  return { kind: 'diverging' };
}

/** The file as the messages name it: "revision 3", or "no revision". */
function fileRevision(file: FileState): string {
  return file.revision === undefined ? 'no revision' : `revision ${file.revision}`;
}

function headText(head: RegistryHead): string {
  return `revision ${head.revision}, applied ${head.appliedAt.toISOString()} by ${head.appliedBy}`;
}

/**
 * Why the file is not applied, in one line that starts with its path: what the file is, what
 * the database holds and by whom, and that nothing was lost.
 */
export function refusalMessage(
  path: string,
  file: FileState,
  verdict: Extract<Verdict, { kind: 'absent' | 'older' | 'diverging' }>,
  head: RegistryHead | undefined,
): string {
  const database = head ? `the database holds ${headText(head)}` : 'the database holds clients recorded before registry revisions';
  if (verdict.kind === 'absent') return `${path}: does not exist, and the client registry is not empty (${database})`;
  if (verdict.kind === 'older') {
    const what = verdict.earlier !== undefined ? `it holds the clients of revision ${verdict.earlier}` : `it is ${fileRevision(file)}`;
    return `${path}: not applied: this clients file is older than the client registry (${what}; ${database})`;
  }
  const removes = verdict.removes?.length ? `; it would remove ${verdict.removes.join(', ')}` : '';
  return `${path}: not applied: this clients file (${fileRevision(file)}) differs from the client registry and is not an edit of it (${database}${removes})`;
}

/** What `clients validate` says of a valid file against the registry. */
export type RegistryStanding = 'current' | 'newer' | 'absent' | 'older' | 'diverging';

export function standingOf(verdict: Verdict): RegistryStanding {
  return verdict.kind === 'apply' ? 'newer' : verdict.kind;
}
