/* global Redoc, document */
// Renders the API reference page (/docs/api) with the Redoc bundle served beside it. A file
// rather than an inline script, so the page's CSP needs no 'unsafe-inline' for scripts.
(function () {
  var root = document.getElementById('api-reference');
  Redoc.init(
    root.getAttribute('data-spec'),
    { expandResponses: '200,201', requiredPropsFirst: true, sortPropsAlphabetically: false, hideHostname: false, menuToggle: true },
    root,
  );
})();
