import { passwordParamsFrom } from '../../accounts/passwords.js';
import { addUser } from '../../accounts/service.js';
import { requireString, UsageError, type Command } from '../command.js';

export const usersAdd: Command = {
  path: ['users', 'add'],
  summary: 'add a user; the password is read from standard input',
  usage: 'users add --email <email> --password-stdin [--name <display name>]',
  options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' }, name: { type: 'string' } },
  async run(ctx) {
    const email = requireString(ctx.values, 'email');
    // Passwords never travel in argv, where other users of the machine can read them.
    if (ctx.values['password-stdin'] !== true) throw new UsageError('--password-stdin is required (pipe the password on standard input)');
    const password = (await ctx.readStdin()).replace(/\r?\n$/, '');
    const name = ctx.values.name;
    const user = await addUser(await ctx.db(), { email, password, displayName: typeof name === 'string' ? name : undefined }, passwordParamsFrom(ctx.config));
    return { json: user, text: `added user ${user.email}, id ${user.id}` };
  },
};
