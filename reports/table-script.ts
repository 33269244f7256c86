/**
 * The page's only script: sorting (click or Enter on a header; again to reverse) and filtering
 * (every word typed must occur in the row) of tables marked `sortable`. Plain DOM, no library, no
 * network, so it works from file://. Cells sort by what they show: numbers with units (12.5%,
 * 3.2 GiB, 1,024) by value, "—" last, anything else as text; ties keep the original order.
 */
export const TABLE_SCRIPT = String.raw`(function () {
  var UNIT = { '%': 0.01, B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, TiB: 1099511627776, PiB: 1125899906842624 };
  function sortKey(text) {
    var t = text.trim();
    if (t === '' || t === '—') return null;
    var m = /^([−+-]?[\d,]*\.?\d+(?:e[−+-]?\d+)?)\s?(%|[KMGTP]iB|B)?$/.exec(t);
    if (!m) return t.toLowerCase();
    var v = parseFloat(m[1].replace(/,/g, '').replace(/−/g, '-'));
    return m[2] ? v * UNIT[m[2]] : v;
  }
  function compare(x, y) {
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      th.setAttribute('aria-sort', 'none');
      function sort() {
        var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
        Array.prototype.forEach.call(heads, function (h) { h.setAttribute('aria-sort', 'none'); });
        th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
        var keyed = rows.map(function (r, i) { return { k: sortKey(r.cells[col].textContent), i: i, r: r }; });
        keyed.sort(function (a, b) {
          if (a.k === null || b.k === null) return a.k === b.k ? a.i - b.i : a.k === null ? 1 : -1;
          return compare(a.k, b.k) * dir || a.i - b.i;
        });
        keyed.forEach(function (e) { body.appendChild(e.r); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
      });
    });
    var bar = table.parentNode.previousElementSibling;
    var input = bar && bar.querySelector('input.table-filter');
    var count = bar && bar.querySelector('.table-count');
    if (!input) return;
    function filter() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (r) {
        var text = r.textContent.toLowerCase();
        var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
        r.hidden = !ok;
        if (ok) shown++;
      });
      if (count) count.textContent = shown + ' of ' + rows.length + ' rows';
    }
    input.addEventListener('input', filter);
    filter();
  });
})();`;
