// The console's only script (CSP: script-src 'self'): draws the events-per-minute chart with
// uPlot from the console's own data route. Every page works without it.
(function () {
  'use strict';
  var chart = document.getElementById('events-chart');
  if (!chart || typeof window.uPlot !== 'function') return;
  // The route's path after the bare origin, never the page's address: that may carry the token
  // (http://ops:TOKEN@host/dashboard/), and fetch() refuses a URL with credentials.
  var path = chart.getAttribute('data-src') || '';
  if (path.charAt(0) !== '/' || path.charAt(1) === '/') {
    chart.textContent = 'The chart could not be drawn: its data route is not a path on this site.';
    return;
  }
  fetch(window.location.origin + path, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then(function (response) {
      if (!response.ok) throw new Error('HTTP ' + response.status);
      return response.json();
    })
    .then(function (body) {
      var xs = body.minutes.map(function (m) {
        return Date.parse(m.minute) / 1000;
      });
      var ys = body.minutes.map(function (m) {
        return m.count;
      });
      chart.setAttribute(
        'data-total',
        String(
          ys.reduce(function (a, b) {
            return a + b;
          }, 0),
        ),
      );
      new window.uPlot(
        {
          width: Math.max(320, chart.clientWidth - 16),
          height: 240,
          series: [
            {},
            {
              label: 'events',
              stroke: '#2f5bd3',
              fill: 'rgba(47, 91, 211, 0.12)',
              width: 2,
              paths: window.uPlot.paths.stepped({ align: 1 }),
            },
          ],
          axes: [{}, { label: 'per minute' }],
          scales: {
            y: {
              range: function (_u, _min, max) {
                return [0, Math.max(1, max)];
              },
            },
          },
        },
        [xs, ys],
        chart,
      );
      chart.classList.add('drawn');
    })
    .catch(function (error) {
      chart.textContent = 'The chart could not be drawn: ' + error.message;
    });
})();
