import type { Command } from './commands/command.js';
import { migrate } from './commands/migrate.js';
import { orgsAdd, orgsList, orgsRemove, orgsSecondApprover } from './commands/orgs.js';
import { organizationsImport, verificationRequestsApprove, verificationRequestsReject } from './commands/organizations.js';
import { usersAdd, usersDisable, usersEnable, usersList, usersResetPassword, usersResetSecondFactor } from './commands/users.js';
import { auditList } from './commands/audit.js';
import {
  membersAdd,
  membersInvitations,
  membersInvite,
  membersList,
  membersRemove,
  membersRevokeInvitation,
  membersSetRole,
} from './commands/members.js';
import { clientsAdd, clientsList, clientsRemove, clientsRotateSecret, clientsValidate } from './commands/clients.js';
import { keysRotate } from './commands/keys.js';
import { apiKeysCreate, apiKeysList, apiKeysRevoke } from './commands/api-keys.js';
import { demoBmf, demoSeed } from './commands/demo.js';
import { dafRedeemCode, dafRejectAccount, dafSubmitGrantRequest } from './commands/daf.js';
import {
  disbursementsFail,
  disbursementsReject,
  disbursementsResubmit,
  disbursementsSettle,
  disbursementsVerify,
  paymentsPending,
} from './commands/disbursements.js';
import { inboundTransfersComplete, inboundTransfersFail } from './commands/inbound-transfers.js';
import { grantsCancel, grantsComplete } from './commands/grants.js';
import { ledgerVerify } from './commands/ledger.js';
import { lockboxesList, lockboxesRequest, paymentSourcesAdd, paymentSourcesList, propertiesAdd } from './commands/gift-processing.js';
import { mailList, webhooksDeliveries, webhooksReplay, webhooksResume } from './commands/mail-webhooks.js';

/** Every admin command; later features register theirs here. */
export const COMMANDS: readonly Command[] = [
  migrate,
  orgsAdd,
  orgsList,
  orgsRemove,
  orgsSecondApprover,
  organizationsImport,
  verificationRequestsApprove,
  verificationRequestsReject,
  usersAdd,
  usersList,
  usersDisable,
  usersEnable,
  usersResetPassword,
  usersResetSecondFactor,
  membersAdd,
  membersSetRole,
  membersRemove,
  membersList,
  membersInvite,
  membersInvitations,
  membersRevokeInvitation,
  clientsAdd,
  clientsRotateSecret,
  clientsList,
  clientsValidate,
  clientsRemove,
  keysRotate,
  apiKeysCreate,
  apiKeysRevoke,
  apiKeysList,
  demoSeed,
  demoBmf,
  dafSubmitGrantRequest,
  dafRedeemCode,
  dafRejectAccount,
  mailList,
  webhooksDeliveries,
  webhooksReplay,
  webhooksResume,
  auditList,
  ledgerVerify,
  inboundTransfersComplete,
  inboundTransfersFail,
  grantsComplete,
  grantsCancel,
  disbursementsSettle,
  disbursementsFail,
  disbursementsResubmit,
  disbursementsVerify,
  disbursementsReject,
  paymentsPending,
  paymentSourcesAdd,
  paymentSourcesList,
  lockboxesRequest,
  lockboxesList,
  propertiesAdd,
];
