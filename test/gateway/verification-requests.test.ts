import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Verification requests (docs/directory.md, "Verification requests"): a grantmaker asks for an
 * unlisted organization; the operator's admin command decides; events in the same transaction.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const GRANTMAKER_EIN = '57-1000001';
const OTHER_GRANTMAKER_EIN = '57-1000002';
const NONPROFIT_EIN = '57-1000003';
const LISTED_EIN = '840000011';
let key: string;
let otherKey: string;
let productionKey: string;
let nonprofitKey: string;
let grantmakerId: string;

const address = { line1: '1 Elm St', city: 'Tulsa', state: 'OK', zip_code: '74103' };
const admin = (argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url });

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: LISTED_EIN, NAME: 'LISTED HELPERS' })]));
  grantmakerId = (await addOrganization(t.db, { ein: GRANTMAKER_EIN, name: 'VR Grantmaker', kind: 'grantmaker' })).id;
  await addOrganization(t.db, { ein: OTHER_GRANTMAKER_EIN, name: 'VR Other Grantmaker', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: NONPROFIT_EIN, name: 'VR Nonprofit', kind: 'nonprofit' });
  key = (await createApiKey(t.db, { org: GRANTMAKER_EIN, environment: 'sandbox' })).key;
  otherKey = (await createApiKey(t.db, { org: OTHER_GRANTMAKER_EIN, environment: 'sandbox' })).key;
  productionKey = (await createApiKey(t.db, { org: GRANTMAKER_EIN, environment: 'production' })).key;
  nonprofitKey = (await createApiKey(t.db, { org: NONPROFIT_EIN, environment: 'sandbox' })).key;
});

function create(body: unknown, bearer = key) {
  return apiRequest(server, 'sandbox', 'POST', '/v1/verification_requests', { bearer, json: body });
}

function get(path: string, bearer = key) {
  return apiRequest(server, 'sandbox', 'GET', path, { bearer });
}

function ids(res: ApiResponse): string[] {
  return (res.body.results as { id: string }[]).map((r) => r.id);
}

async function eventsOf(objectId: string) {
  return t.db
    .selectFrom('events')
    .select(['category', 'organization_id', 'environment', 'associated_object_type'])
    .where('associated_object_id', '=', objectId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

describe('POST /v1/verification_requests', () => {
  it('creates a request awaiting review, with its Location and its created event', async () => {
    const res = await create({
      ein: '57-2000001',
      organization_name: ' Tulsa Tutors ',
      website: 'https://tulsatutors.example',
      contact_email: 'hello@tulsatutors.example',
      recommended_mailing_address: { ...address, line2: 'Suite 2' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^vr_[0-9a-f]{32}$/),
      ein: '572000001',
      organization_name: 'Tulsa Tutors',
      organization_id: expect.stringMatching(/^org_[0-9a-f]{32}$/),
      status: 'needs_review',
      website: 'https://tulsatutors.example',
      recommended_mailing_address: { ...address, line2: 'Suite 2' },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/v1/verification_requests/${res.body.id as string}`);
    expect(await eventsOf(res.body.id as string)).toEqual([
      {
        category: 'verification_request.created',
        organization_id: grantmakerId,
        environment: 'sandbox',
        associated_object_type: 'verification_request',
      },
    ]);
  });

  it('refuses a second open request for the same EIN with 409; another grantmaker asks for the same Organization', async () => {
    const first = await create({ ein: '572000002', organization_name: 'Twice', recommended_mailing_address: address });
    expect(first.status).toBe(201);
    const again = await create({ ein: '57-2000002', organization_name: 'Twice again', recommended_mailing_address: address });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    const other = await create({ ein: '572000002', organization_name: 'Twice', recommended_mailing_address: address }, otherKey);
    expect(other.status).toBe(201);
    expect(other.body.organization_id).toBe(first.body.organization_id);
    expect(
      await t.db
        .selectFrom('events')
        .select('id')
        .where('associated_object_id', '=', other.body.id as string)
        .execute(),
    ).toHaveLength(1);
  });

  it('holds one open request and one Organization per EIN when requests race', async () => {
    const body = { ein: '572000071', organization_name: 'Racing', recommended_mailing_address: address };
    const same = await Promise.all([create(body), create(body), create(body)]);
    expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const body2 = { ...body, ein: '572000072' };
    const two = await Promise.all([create(body2), create(body2, otherKey)]);
    expect(two.map((r) => r.status)).toEqual([201, 201]);
    expect(two[0]!.body.organization_id).toBe(two[1]!.body.organization_id);
  });

  it('refuses (412) an organization the directory lists already, writing nothing', async () => {
    const res = await create({ ein: LISTED_EIN, organization_name: 'Listed', recommended_mailing_address: address });
    expect(res.status).toBe(412);
    expect(res.body.code).toBe('precondition');
    expect(String(res.body.detail)).toContain('org_');
    expect(await t.db.selectFrom('verification_requests').select('id').where('ein', '=', LISTED_EIN).execute()).toEqual([]);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ ein: '12345', organization_name: 'X', recommended_mailing_address: address }, 'ein'],
      [{ ein: '572000003', organization_name: ' ', recommended_mailing_address: address }, 'organization_name'],
      [{ ein: '572000003', organization_name: 'X' }, 'recommended_mailing_address'],
      [
        { ein: '572000003', organization_name: 'X', recommended_mailing_address: { ...address, state: 'Oklahoma' } },
        'recommended_mailing_address.state',
      ],
      [
        { ein: '572000003', organization_name: 'X', recommended_mailing_address: { ...address, zip_code: '741' } },
        'recommended_mailing_address.zip_code',
      ],
      [{ ein: '572000003', organization_name: 'X', website: 'not a url', recommended_mailing_address: address }, 'website'],
      [{ ein: '572000003', organization_name: 'X', contact_email: 'nobody', recommended_mailing_address: address }, 'contact_email'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, field).toBe(400);
      expect(res.body.code).toBe('invalid');
      expect(String(res.body.detail), field).toContain(field);
    }
  });
});

describe('GET /v1/verification_requests and /{id}', () => {
  it("lists the grantmaker's own requests of its environment, newest first, by EIN and in pages", async () => {
    const made: string[] = [];
    for (const ein of ['572000021', '572000022', '572000023']) {
      const res = await create({ ein, organization_name: `Paged ${ein}`, recommended_mailing_address: address });
      made.push(res.body.id as string);
    }
    const first = await get('/v1/verification_requests?page_limit=2');
    expect(first.status).toBe(200);
    expect(ids(first)).toEqual([made[2], made[1]]);
    const second = await get(`/v1/verification_requests?page_limit=2&page_token=${first.body.next_page_token as string}`);
    expect(ids(second)[0]).toBe(made[0]);
    expect(ids(await get('/v1/verification_requests?ein=57-2000022'))).toEqual([made[1]]);
    const others = await get('/v1/verification_requests', otherKey);
    expect(ids(others).some((id) => made.includes(id))).toBe(false);
    const production = await apiRequest(server, 'production', 'GET', '/v1/verification_requests', { bearer: productionKey });
    expect(production.body.results).toEqual([]);
    expect((await get('/v1/verification_requests?ein=123')).status).toBe(400);
    expect((await get('/v1/verification_requests?page_limit=101')).status).toBe(400);
  });

  it("gets one by id; another grantmaker's or an unknown id is 404", async () => {
    const made = await create({ ein: '572000031', organization_name: 'Gettable', recommended_mailing_address: address });
    const res = await get(`/v1/verification_requests/${made.body.id as string}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(made.body);
    expect((await get(`/v1/verification_requests/${made.body.id as string}`, otherKey)).status).toBe(404);
    expect((await get('/v1/verification_requests/vr_00000000000000000000000000000000')).status).toBe(404);
    expect((await get(`/v1/verification_requests/vr_${'0'.repeat(200)}`)).status).toBe(404);
  });
});

describe('admin verification-requests approve|reject', () => {
  it('approves: verified, the organization listed under the request id, audited, with the updated event', async () => {
    const made = await create({ ein: '572000041', organization_name: 'Approved Aid', recommended_mailing_address: address });
    const id = made.body.id as string;
    const run = await admin(['verification-requests', 'approve', '--id', id]);
    expect(run.code, run.stderr).toBe(0);
    const res = await get(`/v1/verification_requests/${id}`);
    expect(res.body).toMatchObject({ status: 'verified', verified_at: expect.any(String) });
    expect(res.body).not.toHaveProperty('failed_at');
    const org = await get(`/v1/organizations/${made.body.organization_id as string}`);
    expect(org.status).toBe(200);
    expect(org.body).toMatchObject({ ein: '572000041', name: 'Approved Aid' });
    expect((await eventsOf(id)).map((e) => e.category)).toEqual(['verification_request.created', 'verification_request.updated']);
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['event', 'details'])
      .where('event', '=', 'verification_request.approved')
      .execute();
    expect(audit).toHaveLength(1);
    // Listed now: a new request for it is refused, and a decided request is not decided again.
    expect((await create({ ein: '572000041', organization_name: 'Again', recommended_mailing_address: address }, otherKey)).status).toBe(
      412,
    );
    const twice = await admin(['verification-requests', 'reject', '--id', id]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('already verified');
  });

  it('approves a request whose EIN was imported meanwhile: it then names the imported organization', async () => {
    const made = await create({ ein: '572000081', organization_name: 'Imported Later', recommended_mailing_address: address });
    await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '572000081', NAME: 'IMPORTED LATER' })]));
    const imported = await get('/v1/organizations/search?q=572000081');
    const importedId = (imported.body.results as { id: string }[])[0]!.id;
    expect(importedId).not.toBe(made.body.organization_id);
    expect((await admin(['verification-requests', 'approve', '--id', made.body.id as string])).code).toBe(0);
    const res = await get(`/v1/verification_requests/${made.body.id as string}`);
    expect(res.body).toMatchObject({ status: 'verified', organization_id: importedId });
    expect((await get(`/v1/organizations/${importedId}`)).body.name).toBe('IMPORTED LATER');
  });

  it('rejects: failed, nothing listed, and the EIN may be asked for again', async () => {
    const made = await create({ ein: '572000051', organization_name: 'Rejected Relief', recommended_mailing_address: address });
    const id = made.body.id as string;
    expect((await admin(['verification-requests', 'reject', '--id', id])).code).toBe(0);
    expect((await get(`/v1/verification_requests/${id}`)).body).toMatchObject({ status: 'failed', failed_at: expect.any(String) });
    expect((await get(`/v1/organizations/${made.body.organization_id as string}`)).status).toBe(404);
    expect((await eventsOf(id)).map((e) => e.category)).toEqual(['verification_request.created', 'verification_request.updated']);
    expect((await create({ ein: '572000051', organization_name: 'Rejected Relief', recommended_mailing_address: address })).status).toBe(
      201,
    );
    const unknown = await admin(['verification-requests', 'approve', '--id', 'vr_nope']);
    expect(unknown.code).toBe(1);
  });
});

describe('callers', () => {
  it("refuses a nonprofit's key with 403", async () => {
    for (const res of [
      await create({ ein: '572000061', organization_name: 'X', recommended_mailing_address: address }, nonprofitKey),
      await get('/v1/verification_requests', nonprofitKey),
      await get('/v1/verification_requests/vr_x', nonprofitKey),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });
});
