import { requireString, UsageError, type Command, type CommandContext } from './command.js';

/** Passwords never travel in argv, where other users of the machine can read them. */
async function passwordFromStdin(ctx: CommandContext): Promise<string> {
  if (ctx.values['password-stdin'] !== true) throw new UsageError('--password-stdin is required (pipe the password on standard input)');
  return (await ctx.readStdin()).replace(/\r?\n$/, '');
}

export const usersAdd: Command = {
  path: ['users', 'add'],
  summary: 'add a user; the password is read from standard input',
  usage: 'users add --email <email> --password-stdin [--name <display name>]',
  options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' }, name: { type: 'string' } },
  async run(ctx) {
    const { passwordParamsFrom } = await import('../../accounts/passwords.js');
    const { addUser } = await import('../../accounts/service.js');
    const email = requireString(ctx.values, 'email');
    const password = await passwordFromStdin(ctx);
    const name = ctx.values.name;
    const user = await addUser(
      await ctx.db(),
      { email, password, displayName: typeof name === 'string' ? name : undefined },
      passwordParamsFrom(ctx.config),
    );
    return { json: user, text: `added user ${user.email}, id ${user.id}` };
  },
};

export const usersList: Command = {
  path: ['users', 'list'],
  summary: 'list users: address, name, active or disabled, created, organizations',
  usage: 'users list',
  options: {},
  async run(ctx) {
    const { listUsers } = await import('../../accounts/user-lifecycle.js');
    const users = await listUsers(await ctx.db());
    const text = users
      .map(
        (u) =>
          `${u.email}  ${u.status.padEnd(8)}  ${u.created_at.slice(0, 10)}  ${u.organizations} org${u.organizations === 1 ? '' : 's'}${u.name ? `  ${u.name}` : ''}`,
      )
      .join('\n');
    return { json: { users }, text: text || '(no users)' };
  },
};

export const usersDisable: Command = {
  path: ['users', 'disable'],
  summary: 'disable a user: no sign-in, sessions end, what they approved is revoked',
  usage: 'users disable --email <email>',
  options: { email: { type: 'string' } },
  async run(ctx) {
    const { disableUser } = await import('../../accounts/user-lifecycle.js');
    const r = await disableUser(await ctx.db(), requireString(ctx.values, 'email'));
    return {
      json: { ...r },
      text: `disabled ${r.email}; ${r.sessions_ended} session${r.sessions_ended === 1 ? '' : 's'} ended, ${r.revoked_authorizations} authorization${r.revoked_authorizations === 1 ? '' : 's'} revoked`,
    };
  },
};

export const usersEnable: Command = {
  path: ['users', 'enable'],
  summary: 'let a disabled user sign in again',
  usage: 'users enable --email <email>',
  options: { email: { type: 'string' } },
  async run(ctx) {
    const { enableUser } = await import('../../accounts/user-lifecycle.js');
    const r = await enableUser(await ctx.db(), requireString(ctx.values, 'email'));
    return { json: { ...r }, text: `enabled ${r.email}` };
  },
};

export const usersResetPassword: Command = {
  path: ['users', 'reset-password'],
  summary: "set a user's password (from standard input); ends their sessions",
  usage: 'users reset-password --email <email> --password-stdin',
  options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
  async run(ctx) {
    const { sendAccountNotice } = await import('../../accounts/notices.js');
    const { passwordParamsFrom } = await import('../../accounts/passwords.js');
    const { setPasswordAsMaker } = await import('../../accounts/user-lifecycle.js');
    const { createMailSender } = await import('../../mail/sender.js');
    const email = requireString(ctx.values, 'email');
    const password = await passwordFromStdin(ctx);
    const db = await ctx.db();
    const r = await setPasswordAsMaker(db, passwordParamsFrom(ctx.config), { email, password });
    // The account is told (a change nobody asked for gets noticed); the password is set either way.
    const origin = ctx.config.dashboard_url;
    const notified = await sendAccountNotice(createMailSender(ctx.config, db), r.email, 'password-changed', {
      how: 'admin',
      environmentName: 'Production',
      accountUrl: `${origin}/account`,
      forgotPasswordUrl: `${origin}/forgot-password`,
    }).then(
      () => true,
      () => false,
    );
    return {
      json: { ...r, notified },
      text: `new password set for ${r.email}; ${r.sessions_ended} session${r.sessions_ended === 1 ? '' : 's'} ended${notified ? '' : ' (the notice e-mail could not be sent)'}`,
    };
  },
};

export const usersResetSecondFactor: Command = {
  path: ['users', 'reset-second-factor'],
  summary: "remove a user's second factors (lost phone and recovery codes); ends their sessions",
  usage: 'users reset-second-factor --email <email>',
  options: { email: { type: 'string' } },
  async run(ctx) {
    const { sendAccountNotice } = await import('../../accounts/notices.js');
    const { createMailSender } = await import('../../mail/sender.js');
    const { resetSecondFactors } = await import('../../identity/factors.js');
    const db = await ctx.db();
    const r = await resetSecondFactors(db, requireString(ctx.values, 'email'));
    const what = [
      r.removed.totp ? 'the authenticator app' : '',
      r.removed.passkeys > 0 ? `${r.removed.passkeys} passkey${r.removed.passkeys === 1 ? '' : 's'}` : '',
      r.removed.recoveryCodes > 0 ? 'the recovery codes' : '',
    ].filter(Boolean);
    // Nothing removed, nothing changed: a mail saying "every second factor was removed" would be untrue.
    if (what.length === 0)
      return {
        json: { ...r, notified: false },
        text: `${r.email} has no second factor: nothing removed, no session ended, no e-mail sent`,
      };
    // The account is told, as for a password set here: a reset nobody asked for gets noticed.
    const notified = await sendAccountNotice(createMailSender(ctx.config, db), r.email, 'second-factors-reset', {
      environmentName: 'Production',
      accountUrl: `${ctx.config.dashboard_url}/account/security`,
    }).then(
      () => true,
      () => false,
    );
    return {
      json: { ...r, notified },
      text: `removed ${what.join(', ')} of ${r.email}; ${r.sessions_ended} session${r.sessions_ended === 1 ? '' : 's'} ended${notified ? '' : ' (the notice e-mail could not be sent)'}`,
    };
  },
};
