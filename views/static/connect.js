/*
 * Almoner Connect: opens Almoner's hosted donor flow for a Connect and tells the page how it
 * ended (docs/giving.md, "The script's API"). No dependencies, no requests of its own.
 *
 *   <script src="https://<dashboard host>/connect.js"></script>
 *   AlmonerConnect.open({ cid: 'connect_…', amount: 25000, frequency: 'one_time' });
 *   <button data-almoner-cid="connect_…" data-almoner-amount="25000">Give from your DAF</button>
 *
 * Events on window: `almoner:success` (and `CHARIOT_SUCCESS`), detail
 * { workflowSessionId, grantIntent: { amount, frequency, fundId, fundName, supported } };
 * `almoner:exit` (and `CHARIOT_EXIT`), detail { reason: 'closed' | 'canceled' | 'error', message? }.
 */
/* global window, document, CustomEvent */
(function () {
  'use strict';
  if (window.AlmonerConnect) return;
  var script = document.currentScript;
  // The flow is served where this script is.
  var flowOrigin = new URL(script && script.src ? script.src : window.location.href).origin;
  var current = null;

  function dispatch(names, detail) {
    for (var i = 0; i < names.length; i += 1) {
      window.dispatchEvent(new CustomEvent(names[i], { detail: detail }));
    }
  }

  function exit(reason, message) {
    var detail = { reason: reason };
    if (message) detail.message = message;
    dispatch(['almoner:exit', 'CHARIOT_EXIT'], detail);
  }

  function finish() {
    if (!current) return;
    window.removeEventListener('message', current.onMessage);
    window.clearInterval(current.timer);
    current = null;
  }

  function open(options) {
    options = options || {};
    var cid = options.cid;
    if (typeof cid !== 'string' || !cid) {
      exit('error', 'AlmonerConnect.open needs the Connect id: { cid }.');
      return;
    }
    if (current && current.popup && !current.popup.closed) {
      current.popup.focus();
      return;
    }
    finish();
    var query = '?origin=' + encodeURIComponent(window.location.origin);
    if (options.amount !== undefined && options.amount !== null && options.amount !== '')
      query += '&amount=' + encodeURIComponent(String(options.amount));
    if (options.frequency) query += '&frequency=' + encodeURIComponent(String(options.frequency));
    var url = flowOrigin + '/connect/' + encodeURIComponent(cid) + query;
    var width = 480;
    var height = 720;
    var left = Math.max(0, (window.screenX || 0) + ((window.outerWidth || width) - width) / 2);
    var top = Math.max(0, (window.screenY || 0) + ((window.outerHeight || height) - height) / 2);
    var popup = window.open(url, 'almoner-connect', 'popup=yes,width=' + width + ',height=' + height + ',left=' + left + ',top=' + top);
    if (!popup) {
      exit('error', 'The browser blocked the window. Allow pop-ups for this page and try again.');
      return;
    }
    var state = { popup: popup, timer: 0, onMessage: null };
    state.onMessage = function (event) {
      // Only the flow itself, in the window this page opened.
      if (event.origin !== flowOrigin || event.source !== popup) return;
      var data = event.data;
      if (!data || data.source !== 'almoner-connect') return;
      if (data.type === 'success') {
        finish();
        dispatch(['almoner:success', 'CHARIOT_SUCCESS'], { workflowSessionId: data.workflowSessionId, grantIntent: data.grantIntent });
      } else if (data.type === 'exit') {
        finish();
        exit(data.reason === 'canceled' ? 'canceled' : 'error', data.message);
      }
    };
    state.timer = window.setInterval(function () {
      if (popup.closed) {
        finish();
        exit('closed');
      }
    }, 400);
    window.addEventListener('message', state.onMessage);
    current = state;
  }

  document.addEventListener('click', function (event) {
    var target = event.target && event.target.closest ? event.target.closest('[data-almoner-cid]') : null;
    if (!target) return;
    event.preventDefault();
    open({
      cid: target.getAttribute('data-almoner-cid'),
      amount: target.getAttribute('data-almoner-amount') || undefined,
      frequency: target.getAttribute('data-almoner-frequency') || undefined,
    });
  });

  window.AlmonerConnect = { open: open };
})();
