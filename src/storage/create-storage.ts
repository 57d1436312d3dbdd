import path from 'node:path';
import type { AppConfig } from '../config/schema.js';
import { FolderStorage, type UploadUrlSigner } from './folder-storage.js';
import type { ObjectStorage } from './object-storage.js';
import { S3Storage } from './s3-storage.js';

/** The folder storage's folder: storage_dir, or <data_dir>/objects when unset. */
export function storageDir(config: Pick<AppConfig, 'storage_dir' | 'data_dir'>): string {
  return path.resolve(config.storage_dir ?? path.join(config.data_dir, 'objects'));
}

type StorageSettings = Pick<
  AppConfig,
  | 'storage'
  | 'storage_dir'
  | 'data_dir'
  | 's3_bucket'
  | 's3_region'
  | 's3_endpoint'
  | 's3_force_path_style'
  | 's3_access_key_id'
  | 's3_secret_access_key'
>;

/**
 * The object storage the configuration names (docs/gift-processing.md, "Object storage"): the
 * folder (its upload URLs signed by `signer`, served by Almoner's API hosts) or an S3 bucket
 * (its own presigned URLs; `signer` unused).
 */
export function createObjectStorage(config: StorageSettings, signer: UploadUrlSigner): ObjectStorage {
  if (config.storage === 'folder') return new FolderStorage(storageDir(config), signer);
  if (!config.s3_bucket || !config.s3_region) throw new Error('storage "s3" needs s3_bucket and s3_region'); // the schema says so first
  return new S3Storage({
    bucket: config.s3_bucket,
    region: config.s3_region,
    endpoint: config.s3_endpoint,
    forcePathStyle: config.s3_force_path_style,
    credentials:
      config.s3_access_key_id && config.s3_secret_access_key
        ? { accessKeyId: config.s3_access_key_id, secretAccessKey: config.s3_secret_access_key }
        : undefined,
  });
}
