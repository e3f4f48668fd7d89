// Draws the console's time-series charts with uPlot (shipped with the package, no CDN).
// Each <div class="chart" data-series="ID"> names a <script type="application/json" id="ID">
// holding {title, x: [unix seconds], series: [{label, values}], money: bool}.
(function () {
  // An integer count of micro-units as a decimal string, by slicing its digits: exact,
  // no floating-point division near money. `decimals` (2 to 6) keeps that many.
  function formatMicros(v, decimals) {
    var n = Math.round(v);
    var digits = String(Math.abs(n)).padStart(7, '0');
    return (n < 0 ? '-' : '') + digits.slice(0, -6) + '.' + digits.slice(-6, -6 + decimals || undefined);
  }
  function oneInstant(xs) {
    return xs.length > 0 && xs.every(function (x) { return x === xs[0]; });
  }
  function draw(element) {
    var spec = JSON.parse(document.getElementById(element.dataset.series).textContent);
    var palette = ['#2f5bea', '#067647', '#b54708', '#b42318', '#6941c6'];
    var width = Math.max(element.clientWidth - 24, 280);
    var options = {
      title: spec.title,
      width: width,
      height: 220,
      series: [{}].concat(spec.series.map(function (s, i) {
        return {
          label: s.label, stroke: palette[i % palette.length], width: 2,
          fill: i === 0 ? 'rgba(47,91,234,0.08)' : undefined,
          paths: spec.steps ? uPlot.paths.stepped({ align: 1 }) : undefined,
          // Amounts arrive as integer micro-units; only what is shown is divided.
          value: spec.micros ? function (u, v) { return v == null ? '—' : formatMicros(v, 6); } : undefined,
        };
      })),
      // As many decimals as the ticks' spacing needs (at least 2, at most 6).
      axes: [{}, { size: 80, values: spec.micros ? function (u, vals, axis, space, incr) {
        // The tick spacing (micro-units) decides the decimals: one digit per power of ten below a unit.
        var decimals = Math.min(6, Math.max(2, 7 - String(Math.max(1, Math.round(incr || 1000000))).length));
        return vals.map(function (v) { return formatMicros(v, decimals); });
      } : undefined }],
      // Points that all fall in one second (a wallet's first burst) give uPlot an empty
      // range, which it widens by years: show a minute around them instead.
      scales: { x: oneInstant(spec.x) ? { time: true, auto: false, range: [spec.x[0] - 30, spec.x[0] + 30] } : { time: true } },
    };
    element.textContent = '';
    new uPlot(options, [spec.x].concat(spec.series.map(function (s) { return s.values; })), element);
  }
  document.querySelectorAll('.chart[data-series]').forEach(draw);
})();
