import { optionalString, requireString, UsageError, type Command, type CommandContext } from './command.js';

function environment(ctx: CommandContext) {
  const value = requireString(ctx.values, 'environment');
  if (value !== 'production' && value !== 'sandbox') throw new UsageError('--environment must be production or sandbox');
  return value;
}

export const dafSubmitGrantRequest: Command = {
  path: ['daf', 'submit-grant-request'],
  summary: 'stand in for a donor submitting a grant request through DAFpay (e-mails a code when the donor account is not approved)',
  usage:
    'daf submit-grant-request --fund-provider <ein> --environment <env> --email <donor email> --ein <nonprofit ein> --amount-cents <n> [--frequency one_time|monthly|quarterly|annual] [--giving-pool <name>] [--purpose <text>] [--note <text>] [--name <donor name>]',
  options: {
    'fund-provider': { type: 'string' },
    environment: { type: 'string' },
    email: { type: 'string' },
    ein: { type: 'string' },
    'amount-cents': { type: 'string' },
    frequency: { type: 'string' },
    'giving-pool': { type: 'string' },
    purpose: { type: 'string' },
    note: { type: 'string' },
    name: { type: 'string' },
  },
  async run(ctx) {
    const { loadSecretBox } = await import('../../keys/secret-box.js');
    const { ServerKeys } = await import('../../keys/server-keys.js');
    const { createMailSender } = await import('../../mail/sender.js');
    const { submitFromDonor } = await import('../../daf/grant-requests-service.js');
    const frequency = optionalString(ctx.values, 'frequency');
    if (frequency && !['one_time', 'monthly', 'quarterly', 'annual'].includes(frequency))
      throw new UsageError('--frequency must be one_time, monthly, quarterly or annual');
    const db = await ctx.db();
    const result = await submitFromDonor(db, createMailSender(ctx.config, db), await ServerKeys.load(db, loadSecretBox(ctx.config)), {
      fundProviderEin: requireString(ctx.values, 'fund-provider'),
      environment: environment(ctx),
      email: requireString(ctx.values, 'email'),
      nonprofitEin: requireString(ctx.values, 'ein'),
      amountCents: Number(requireString(ctx.values, 'amount-cents')),
      frequency: frequency as 'one_time' | undefined,
      givingPool: optionalString(ctx.values, 'giving-pool'),
      purpose: optionalString(ctx.values, 'purpose'),
      note: optionalString(ctx.values, 'note'),
      donorName: optionalString(ctx.values, 'name'),
    });
    return {
      json: result,
      text: `grant request ${result.grant_request_id} for donor account ${result.donor_account_id}${result.mail_via === 'smtp' ? ' (a one-time code was e-mailed to the donor)' : result.mail_via === 'dev_table' ? ' (a one-time code for the donor was kept in the dev mail table; see `admin mail list`)' : ''}`,
    };
  },
};

export const dafRedeemCode: Command = {
  path: ['daf', 'redeem-code'],
  summary: 'stand in for a donor entering a code during DAFpay profile setup (approves the donor account)',
  usage: 'daf redeem-code --environment <env> --email <donor email> --code <code>',
  options: { environment: { type: 'string' }, email: { type: 'string' }, code: { type: 'string' } },
  async run(ctx) {
    const { loadSecretBox } = await import('../../keys/secret-box.js');
    const { ServerKeys } = await import('../../keys/server-keys.js');
    const { redeemCode } = await import('../../daf/tokens-service.js');
    const { donorAccountView } = await import('../../daf/views.js');
    const db = await ctx.db();
    const account = await redeemCode(
      db,
      await ServerKeys.load(db, loadSecretBox(ctx.config)),
      environment(ctx),
      requireString(ctx.values, 'code'),
      requireString(ctx.values, 'email'),
    );
    const view = donorAccountView(account);
    return { json: view, text: `donor account ${view.id} is ${view.status}` };
  },
};

export const dafRejectAccount: Command = {
  path: ['daf', 'reject-account'],
  summary: "record a fund provider's rejection of a donor account",
  usage: 'daf reject-account --fund-provider <ein> --environment <env> --id <donor account id> --reason <text>',
  options: { 'fund-provider': { type: 'string' }, environment: { type: 'string' }, id: { type: 'string' }, reason: { type: 'string' } },
  async run(ctx) {
    const { parseEin } = await import('../../accounts/ein.js');
    const { notFound } = await import('../../errors/domain-error.js');
    const { findOrganizationOfKind } = await import('../../accounts/repository.js');
    const { rejectDonorAccount } = await import('../../daf/donor-accounts-service.js');
    const { donorAccountView } = await import('../../daf/views.js');
    const db = await ctx.db();
    const ein = parseEin(requireString(ctx.values, 'fund-provider'));
    const provider = ein ? await findOrganizationOfKind(db, ein, 'fund_provider') : undefined;
    if (!provider) throw notFound('no such fund provider');
    const account = await rejectDonorAccount(
      db,
      { environment: environment(ctx), fundProviderId: provider.id, principal: 'admin' },
      requireString(ctx.values, 'id'),
      requireString(ctx.values, 'reason'),
    );
    const view = donorAccountView(account);
    return { json: view, text: `donor account ${view.id} is ${view.status}` };
  },
};
