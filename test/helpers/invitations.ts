import type { Db } from '../../src/db/database.js';
import type { dashboardSession } from './dashboard.js';

type Session = Awaited<ReturnType<typeof dashboardSession>>;

/** Submits the members page's invite form as the signed-in session (following the 303 back). */
export async function inviteFromMembersPage(session: Session, ein: string, email: string, role: string) {
  const page = await session.get(`/orgs/${ein}/members`);
  return session.browser.submit(page, '/members/invite', { email, role });
}

/** The newest mail kept for an address (the dev mail sink), with the invitation link it carries. */
export async function invitationMail(db: Db, email: string) {
  const mail = await db.selectFrom('outbound_mail').selectAll().where('recipient', '=', email).orderBy('id', 'desc').executeTakeFirst();
  if (!mail) throw new Error(`no mail to ${email}`);
  const link = /https?:\/\/\S+\/invitations\/[A-Za-z0-9_-]{43}/.exec(mail.body)?.[0];
  if (!link) throw new Error(`the mail to ${email} has no invitation link: ${mail.body}`);
  return { subject: mail.subject, body: mail.body, link, token: link.slice(-43) };
}
