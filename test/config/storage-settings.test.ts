import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { createObjectStorage, storageDir } from '../../src/storage/create-storage.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { S3Storage } from '../../src/storage/s3-storage.js';

/** The object storage's settings (docs/gift-processing.md, "Object storage"; docs/configuration.md). */

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig({ env });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const signer = { sign: () => 'https://api.example.org/v1/mailbox/uploads/x' };

describe('storage settings', () => {
  it('default to the folder storage under data_dir and 512 MiB batches', () => {
    const config = loadConfig({ env: {} });
    expect(config).toMatchObject({ storage: 'folder', s3_force_path_style: false, mail_batch_max_bytes: 536_870_912 });
    expect(config.storage_dir).toBeUndefined();
    expect(config.s3_bucket).toBeUndefined();
    expect(storageDir(config)).toBe(path.resolve(config.data_dir, 'objects'));
    const storage = createObjectStorage(config, signer);
    expect(storage).toBeInstanceOf(FolderStorage);
    expect((storage as FolderStorage).root).toBe(path.resolve(config.data_dir, 'objects'));
    const moved = loadConfig({ env: { ALMONER_STORAGE_DIR: '/srv/almoner/objects', ALMONER_MAIL_BATCH_MAX_BYTES: '1048576' } });
    expect(storageDir(moved)).toBe('/srv/almoner/objects');
    expect(moved.mail_batch_max_bytes).toBe(1_048_576);
  });

  it('refuse the s3 storage without its bucket and region, naming both', () => {
    expect(problemsOf({ ALMONER_STORAGE: 's3' }).sort()).toEqual([
      's3_bucket (set it in config/ or ALMONER_S3_BUCKET): is required with storage "s3" (ALMONER_S3_BUCKET)',
      's3_region (set it in config/ or ALMONER_S3_REGION): is required with storage "s3" (ALMONER_S3_REGION)',
    ]);
    expect(problemsOf({ ALMONER_STORAGE: 's3', ALMONER_S3_BUCKET: 'almoner-batches' })).toEqual([
      expect.stringMatching(/^s3_region .*is required with storage "s3"/),
    ]);
    expect(problemsOf({ ALMONER_STORAGE: 'bucket' })).toEqual([expect.stringMatching(/^storage .*must be one of folder, s3/)]);
  });

  it('take the s3 storage with bucket and region, an endpoint and path style for S3-compatible services', () => {
    const config = loadConfig({
      env: {
        ALMONER_STORAGE: 's3',
        ALMONER_S3_BUCKET: 'almoner-batches',
        ALMONER_S3_REGION: 'us-east-1',
        ALMONER_S3_ENDPOINT: 'http://127.0.0.1:9000',
        ALMONER_S3_FORCE_PATH_STYLE: 'true',
      },
    });
    expect(config).toMatchObject({ storage: 's3', s3_endpoint: 'http://127.0.0.1:9000', s3_force_path_style: true });
    const storage = createObjectStorage(config, signer);
    expect(storage).toBeInstanceOf(S3Storage);
    expect(storage.kind).toBe('s3');
    (storage as S3Storage).destroy();
  });

  it('take both access key settings or neither, and never repeat the secret', () => {
    const secret = 'wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY';
    const lone = problemsOf({ ALMONER_S3_SECRET_ACCESS_KEY: secret });
    expect(lone).toEqual([expect.stringMatching(/^s3_access_key_id .*must be set together/)]);
    const bad = problemsOf({
      ALMONER_S3_SECRET_ACCESS_KEY: '',
      ALMONER_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      ALMONER_S3_BUCKET: 'Not A Bucket',
    });
    expect(bad.join('\n')).toMatch(/s3_bucket .*must be a bucket name/);
    const config = loadConfig({ env: { ALMONER_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE', ALMONER_S3_SECRET_ACCESS_KEY: secret } });
    expect(config.s3_secret_access_key).toBe(secret);
    // A refused value is repeated in the problem, except a secret's.
    let problems: readonly string[] = [];
    try {
      loadConfig({
        env: { ALMONER_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' },
        overrides: { s3_access_key_id: [secret], s3_secret_access_key: [secret] },
      });
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    expect(problems).toEqual([
      expect.stringMatching(/^s3_access_key_id \(from override\): must be text .*, got \["wJalr/),
      's3_secret_access_key (from override): must be text (a JSON string in a config file)',
    ]);
  });

  it('leave the production profile as it was: the folder storage is accepted there', () => {
    const config = loadConfig({
      env: {
        ALMONER_PROFILE: 'production',
        DATABASE_URL: 'postgres://db.example.org/almoner',
        ALMONER_SMTP_URL: 'smtp://mail.example.org',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
        ALMONER_TRUSTED_PROXIES: '10.0.0.0/8',
      },
    });
    expect(config.storage).toBe('folder');
  });
});
