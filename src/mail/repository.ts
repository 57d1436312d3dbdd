import type { Executor } from '../db/executor.js';

/** The dev mail sink: a message kept instead of sent. */
export async function insertOutboundMail(db: Executor, mail: { recipient: string; subject: string; body: string }): Promise<void> {
  await db.insertInto('outbound_mail').values(mail).execute();
}

/** What `admin mail list` shows: the kept mail, newest first. */
export async function listMail(db: Executor, to: string | undefined, limit: number) {
  let query = db.selectFrom('outbound_mail').selectAll().orderBy('id', 'desc').limit(limit);
  if (to) query = query.where('recipient', '=', to.normalize('NFC').trim().toLowerCase().normalize('NFC'));
  return (await query.execute()).map((m) => ({
    id: String(m.id),
    to: m.recipient,
    subject: m.subject,
    body: m.body,
    created_at: m.created_at.toISOString(),
  }));
}
