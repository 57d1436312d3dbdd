// Scopes and roles are shared with the resource gateway; they live in accounts/.
export * from '../accounts/scopes.js';
