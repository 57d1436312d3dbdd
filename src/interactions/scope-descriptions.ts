/** Each permission in plain words, for the consent screen. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  read_only: 'View your nonprofit’s data (donations, grants and other records)',
  read_write: 'View and change your nonprofit’s data',
  openid: 'Know who you are (your name and e-mail address)',
  offline_access: 'Stay connected when you are not using the application',
  'read:bank_accounts': 'Read your nonprofit’s bank accounts, statements and transactions',
  'sync:connected_accounts': 'Keep your nonprofit’s connected bank accounts in sync',
};
