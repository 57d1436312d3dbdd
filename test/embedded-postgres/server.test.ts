import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryOnce as query } from '../helpers/database.js';
import { EmbeddedPostgresError, openEmbeddedPostgres } from '../../src/embedded-postgres/server.js';
import { tempDir } from '../helpers/app.js';

describe('embedded PostgreSQL', () => {
  it('initialises once, keeps data across restarts, and is shared by a second user', async () => {
    const dir = tempDir('almoner-postgres-');
    const first = await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' });
    expect(first.startedHere).toBe(true);
    await query(first.url, 'create table kept (v int); insert into kept values (42)');
    const second = await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'if-started-here' });
    expect(second.startedHere).toBe(false);
    expect(second.port).toBe(first.port);
    await second.release();
    // The second user did not stop the PostgreSQL the first one uses.
    expect(await query(first.url, 'select v from kept')).toEqual([{ v: 42 }]);
    await first.release();
    expect(fs.existsSync(path.join(dir, 'pg', 'postmaster.pid'))).toBe(false);
    const again = await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' });
    expect(await query(again.url, 'select v from kept')).toEqual([{ v: 42 }]);
    await again.release();
    // The password is generated, kept private to the owner, and never the package default.
    const credentials = fs.statSync(path.join(dir, 'embedded-postgres.json'));
    expect(credentials.mode & 0o077).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'embedded-postgres.json'), 'utf8')).password).not.toBe('password');
  });

  it('treats a postmaster.pid whose pid now belongs to another process as stale', async () => {
    const dir = tempDir('almoner-postgres-');
    const postgres = await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' });
    await postgres.release();
    const impostor = spawn('sleep', ['30']);
    try {
      fs.writeFileSync(
        path.join(dir, 'pg', 'postmaster.pid'),
        `${impostor.pid}\n${path.join(dir, 'pg')}\n0\n${postgres.port}\n\n127.0.0.1\n`,
      );
      const reopened = await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' });
      expect(reopened.startedHere).toBe(true);
      await reopened.release();
    } finally {
      impostor.kill('SIGKILL');
    }
  });

  it('removes what an initialisation killed outright (kill -9) left behind, and initialises afresh', async () => {
    const dir = tempDir('almoner-postgres-');
    // Named as initialise() names them, after a process that no longer exists.
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    const suffix = `${gone.pid}-0123456789ab`;
    fs.mkdirSync(path.join(dir, `pg.init-${suffix}`));
    fs.writeFileSync(path.join(dir, `pg.init-${suffix}`, 'PG_VERSION'), '17\n');
    fs.writeFileSync(path.join(dir, `.pwfile-${suffix}`), 'secret\n');
    fs.writeFileSync(path.join(dir, `embedded-postgres.json.${suffix}`), '{}');
    const postgres = await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' });
    await postgres.release();
    expect(fs.readdirSync(dir).filter((name) => name.includes(suffix))).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'pg', 'PG_VERSION'))).toBe(true);
  });

  it('explains a missing credentials file instead of failing obscurely', async () => {
    const dir = tempDir('almoner-postgres-');
    const postgres = await openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' });
    await postgres.release();
    fs.rmSync(path.join(dir, 'embedded-postgres.json'));
    await expect(openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' })).rejects.toThrow(EmbeddedPostgresError);
    await expect(openEmbeddedPostgres({ dataDir: dir, stopWhenUnused: 'always' })).rejects.toThrow(
      /embedded-postgres\.json is missing or unreadable .*; restore it, or move the data directory aside/,
    );
  });
});
