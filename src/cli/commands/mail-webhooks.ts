import { optionalString, requireString, UsageError, type Command } from './command.js';

export const mailList: Command = {
  path: ['mail', 'list'],
  summary: 'show the mail the dev profile kept instead of sending (newest first)',
  usage: 'mail list [--to <email>] [--limit N]',
  options: { to: { type: 'string' }, limit: { type: 'string' } },
  async run(ctx) {
    const { listMail } = await import('../../mail/repository.js');
    const limit = Number(optionalString(ctx.values, 'limit') ?? 20);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1 to 1000');
    const mail = await listMail(await ctx.db(), optionalString(ctx.values, 'to'), limit);
    return {
      json: { mail },
      text: mail.map((m) => `#${m.id} ${m.created_at} to ${m.to}: ${m.subject}\n${m.body}\n`).join('\n') || '(no mail)',
    };
  },
};

export const webhooksDeliveries: Command = {
  path: ['webhooks', 'deliveries'],
  summary: 'the webhook delivery log (newest first)',
  usage: 'webhooks deliveries [--subscription <id>] [--status pending|succeeded|failed] [--limit N]',
  options: { subscription: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
  async run(ctx) {
    const { listDeliveries } = await import('../../webhooks/admin-repository.js');
    const status = optionalString(ctx.values, 'status');
    if (status && !['pending', 'succeeded', 'failed'].includes(status))
      throw new UsageError('--status must be pending, succeeded or failed');
    const limit = Number(optionalString(ctx.values, 'limit') ?? 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be 1 to 1000');
    const deliveries = await listDeliveries(await ctx.db(), { subscriptionId: optionalString(ctx.values, 'subscription'), status, limit });
    return {
      json: { deliveries },
      text:
        deliveries
          .map(
            (d) =>
              `${d.id}  ${d.status.padEnd(9)}  attempts ${d.attempts}  ${d.category}  → ${d.url}${d.last_error ? `  (${d.last_error})` : ''}`,
          )
          .join('\n') || '(no deliveries)',
    };
  },
};

export const webhooksReplay: Command = {
  path: ['webhooks', 'replay'],
  summary: 'queue a delivery again, at once',
  usage: 'webhooks replay <delivery id>',
  options: { id: { type: 'string' } },
  positionals: ['id'],
  async run(ctx) {
    const { CLI_ACTOR } = await import('../../events/actor.js');
    const { replayDelivery } = await import('../../events/deliveries-service.js');
    const replayed = await replayDelivery(await ctx.db(), requireString(ctx.values, 'id'), undefined, CLI_ACTOR);
    return { json: replayed, text: `delivery ${replayed.id} queued again` };
  },
};

export const webhooksResume: Command = {
  path: ['webhooks', 'resume'],
  summary: 'resume a subscription paused after repeated failures',
  usage: 'webhooks resume <subscription id>',
  options: { id: { type: 'string' } },
  positionals: ['id'],
  async run(ctx) {
    const { CLI_ACTOR } = await import('../../events/actor.js');
    const { resumeSubscription } = await import('../../events/subscriptions-service.js');
    const resumed = await resumeSubscription(await ctx.db(), requireString(ctx.values, 'id'), undefined, CLI_ACTOR);
    return {
      json: { id: resumed.id, status: resumed.status, url: resumed.url },
      text: `subscription ${resumed.id} (${resumed.url}) resumed`,
    };
  },
};
