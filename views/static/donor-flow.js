// The donor flow's pages (docs/giving.md, "Security of the flow"): a page that ends the flow posts
// its message to the page that opened it, to that page's origin only (the server validated it
// when the flow was opened), then closes when the message says so. "Done" closes the window.
/* global window, document */
(function () {
  'use strict';
  var holder = document.getElementById('almoner-flow-message');
  if (holder && window.opener) {
    try {
      window.opener.postMessage(JSON.parse(holder.getAttribute('data-message')), holder.getAttribute('data-origin'));
    } catch {
      // The opener went elsewhere: nobody is left to tell.
    }
    if (holder.getAttribute('data-close') === 'true')
      window.setTimeout(function () {
        window.close();
      }, 300);
  }
  var buttons = document.querySelectorAll('[data-flow-close]');
  for (var i = 0; i < buttons.length; i += 1) {
    buttons[i].addEventListener('click', function () {
      window.close();
    });
  }
})();
