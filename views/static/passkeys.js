/* global window, document, URLSearchParams, FormData */
// Passkeys on the hosted pages (docs/security.md, "Passkeys"). Every passkey form is hidden
// until this script finds a browser that can use passkeys. On submit it asks this origin for
// the options (the form's own fields, CSRF token included, go with the request), lets the
// browser make or use the passkey, puts the answer in the form's "response" field and submits
// the form as usual: the server decides, and the page it answers with is an ordinary page.
(function () {
  'use strict';
  var webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) return;

  function say(form, text) {
    var status = form.querySelector('[data-passkey-status]');
    if (status) status.textContent = text;
  }

  function use(form) {
    var button = form.querySelector('button[type="submit"]');
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (button) button.disabled = true;
      say(form, '');
      fetch(form.dataset.options, {
        method: 'POST',
        body: new URLSearchParams(new FormData(form)),
        credentials: 'same-origin',
        headers: { Accept: 'application/json' },
      })
        .then(function (answer) {
          if (!answer.ok) throw new Error(answer.status === 429 ? 'busy' : 'options');
          return answer.json();
        })
        .then(function (optionsJSON) {
          return form.dataset.passkey === 'register'
            ? webauthn.startRegistration({ optionsJSON: optionsJSON })
            : webauthn.startAuthentication({ optionsJSON: optionsJSON });
        })
        .then(function (result) {
          form.elements.response.value = JSON.stringify(result);
          form.submit();
        })
        .catch(function (error) {
          if (button) button.disabled = false;
          var message = error && error.message;
          say(
            form,
            message === 'busy'
              ? 'Too many passkey sign-ins were started from your network. Try again in a few minutes, or use another way.'
              : message === 'options'
                ? 'Passkeys are not available right now. Reload the page and try again.'
                : 'No passkey was used. Try again, or use another way.',
          );
        });
    });
  }

  document.querySelectorAll('form[data-passkey]').forEach(function (form) {
    form.hidden = false;
    use(form);
  });
  document.querySelectorAll('[data-passkey-unsupported]').forEach(function (note) {
    note.hidden = true;
  });
})();
