/* global document */
// A sign-out page that needs no decision (docs/oauth.md, "Signing out from an application")
// posts its form at once. Without script the page shows the form's button, which does the same.
const form = document.querySelector('form[data-auto-submit]');
if (form) form.submit();
