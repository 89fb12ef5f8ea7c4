// The replay page (bot/web/replay.py): shows the 复盘 and checks the game in the browser.
// (Its vendored helpers, js-sha256 and tweetnacl, come before it in the page.)
// Every text goes in with textContent (the data is players' text: never markup). The checks
// are the ones `wolfjudge verify` makes, but the replay of the commands:
//   - the Ed25519 signature over the export (bot/store/signing.py: canonical JSON, keys
//     sorted, no spaces, UTF-8);
//   - the commitment of the first post: SHA-256(seed "|" deal "|" key) (engine/rng.py);
//   - the deal: the preset shuffled by draws 0.. of the seed (engine/rng.py shuffled);
//   - each random choice of the log (engine/rng.py choice).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var words = data.texts;
  var root = document.getElementById("replay");
  var enc = new TextEncoder();

  function say(key, fields) {
    return String(words[key]).replace(/\{(\w+)\}/g, function (_, k) { return fields[k]; });
  }
  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }

  // canonical JSON, as Python's json.dumps(sort_keys=True, separators=(",", ":"))
  function canon(v) {
    if (v === null || typeof v !== "object") { return JSON.stringify(v); }
    if (Array.isArray(v)) { return "[" + v.map(canon).join(",") + "]"; }
    return "{" + Object.keys(v).sort().map(function (k) {
      return JSON.stringify(k) + ":" + canon(v[k]);
    }).join(",") + "}";
  }
  function bytes(hex) {
    var out = new Uint8Array(hex.length / 2);
    for (var i = 0; i < out.length; i++) { out[i] = parseInt(hex.substr(2 * i, 2), 16); }
    return out;
  }
  function hex(buf) {
    return Array.prototype.map.call(new Uint8Array(buf), function (b) {
      return ("0" + b.toString(16)).slice(-2);
    }).join("");
  }
  // WebCrypto where the browser has it; else the vendored js-sha256 and tweetnacl, embedded
  // in the page (bot/web/static/vendor): a page not served over HTTPS has no WebCrypto, and
  // an older browser no Ed25519 in it.
  var subtle = window.crypto && window.crypto.subtle;
  function sha256(text) {
    if (subtle) { return subtle.digest("SHA-256", enc.encode(text)); }
    return Promise.resolve(window.sha256.arrayBuffer(enc.encode(text)));
  }
  async function ed25519(pub, sig, message) {
    if (subtle) {
      try {
        var key = await subtle.importKey("raw", pub, {name: "Ed25519"}, false, ["verify"]);
        return await subtle.verify({name: "Ed25519"}, key, sig, message);
      } catch (e) { /* no Ed25519 in this browser's WebCrypto: the vendored one below */ }
    }
    return window.nacl.sign.detached.verify(message, sig, pub);
  }

  async function draw(seed, counter, n) {
    var two64 = BigInt(1) << BigInt(64);
    var big = BigInt(n);
    var limit = two64 - (two64 % big);
    for (var attempt = 0; ; attempt++) {
      var d = new Uint8Array(await sha256(seed + ":" + counter + ":" + attempt));
      var v = BigInt(0);
      for (var i = 0; i < 8; i++) { v = (v << BigInt(8)) | BigInt(d[i]); }
      if (v < limit) { return Number(v % big); }
    }
  }
  async function shuffled(seed, counter, items) {
    var out = items.slice();
    for (var i = out.length - 1; i > 0; i--) {
      var j = await draw(seed, counter + (out.length - 1 - i), i + 1);
      var x = out[i]; out[i] = out[j]; out[j] = x;
    }
    return out;
  }
  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

  async function checks() {
    var ex = data.export;
    var log = ex.log;
    var created = log.find(function (e) { return e.type === "GameCreated"; });
    var over = log.find(function (e) { return e.type === "GameOver" || e.type === "GameEnded"; });
    var seed = over.data.seed;
    var deal = Object.keys(over.data.roles).map(Number).sort(function (a, b) { return a - b; })
      .map(function (n) { return over.data.roles[n]; });
    var out = [];
    var sig = ex.signature;
    var body = {};
    Object.keys(ex).forEach(function (k) { if (k !== "signature") { body[k] = ex[k]; } });
    var signed = false;
    if (sig) {
      signed = await ed25519(bytes(sig.pubkey), bytes(sig.sig), enc.encode(canon(body)));
    }
    out.push([words.signature, signed]);
    var pub = sig ? sig.pubkey : created.data.signing_pubkey;
    var text = seed + "|" + deal.join(",") + (pub ? "|" + pub : "");
    var commitment = hex(await sha256(text));
    out.push([words.commitment, commitment === created.data.commitment &&
              commitment === ex.game.commitment]);
    var dealt = data.preset ? await shuffled(seed, 0, data.preset) : ex.game.params.roles;
    out.push([words.deal, same(dealt, deal)]);
    var draws = log.filter(function (e) { return e.type === "RandomChoice"; });
    var good = true;
    for (var i = 0; i < draws.length; i++) {
      var d = draws[i].data;
      good = good && d.options[await draw(seed, d.counter, d.options.length)] === d.picked;
    }
    out.push([say("choices", {n: draws.length}), good]);
    return out;
  }

  function verdict(box, results) {
    box.textContent = "";
    var bad = results.filter(function (r) { return !r[1]; });
    box.appendChild(el("p", bad.length ? words.bad_all : words.ok_all,
                       "verdict " + (bad.length ? "bad" : "ok")));
    var list = el("ul");
    results.forEach(function (r) {
      list.appendChild(el("li", (r[1] ? "✓ " : "✗ ") + r[0], r[1] ? "ok" : "bad"));
    });
    box.appendChild(list);
    box.setAttribute("data-verdict", bad.length ? "bad" : "ok");
  }

  function steps(parent) {
    var at = 0;
    var all = false;
    var nav = el("div", undefined, "nav");
    var prev = el("button", words.prev);
    var next = el("button", words.next);
    var every = el("button", words.all);
    var where = el("span");
    var shown = el("div");
    nav.append(prev, next, every, where);
    parent.append(nav, shown);
    function show() {
      shown.textContent = "";
      data.phases.forEach(function (p, i) {
        if (!all && i !== at) { return; }
        var step = el("div", undefined, "step");
        step.appendChild(el("h3", p.title));
        step.appendChild(el("pre", p.lines.join("\n")));
        shown.appendChild(step);
      });
      where.textContent = all ? "" : say("step_of", {i: at + 1, n: data.phases.length});
      prev.disabled = all || at === 0;
      next.disabled = all || at === data.phases.length - 1;
    }
    prev.addEventListener("click", function () { at = Math.max(0, at - 1); show(); });
    next.addEventListener("click", function () {
      at = Math.min(data.phases.length - 1, at + 1); show();
    });
    every.addEventListener("click", function () { all = !all; show(); });
    show();
  }

  var box = el("section");
  box.id = "verify";
  box.appendChild(el("h2", words.verify));
  var result = el("div", words.checking);
  result.id = "verdict";
  box.appendChild(result);
  var rolesBox = el("section");
  rolesBox.appendChild(el("h2", words.roles));
  rolesBox.appendChild(el("pre", data.roles.join("\n")));
  var seedLine = data.export.log.find(function (e) {
    return e.type === "GameOver" || e.type === "GameEnded";
  });
  rolesBox.appendChild(el("p", say("seed", {seed: seedLine.data.seed})));
  var votesBox = el("section");
  votesBox.id = "votes";
  votesBox.appendChild(el("h2", words.votes));
  data.votes.forEach(function (v) {
    votesBox.appendChild(el("h3", v.title));
    var table = el("table");
    var head = el("tr");
    head.append(el("th", words.voter), el("th", words.target));
    table.appendChild(head);
    v.ballots.forEach(function (b) {
      var row = el("tr");
      row.append(el("td", say("seat", {n: b[0]})),
                 el("td", b[1] === null ? words.abstain : say("seat", {n: b[1]})));
      table.appendChild(row);
    });
    votesBox.appendChild(table);
    votesBox.appendChild(el("p", v.counts.map(function (c) {
      var target = c[0] === 0 || c[0] === "0" ? words.abstain : say("seat", {n: c[0]});
      return say("count", {target: target, n: c[1]});
    }).join("；")));
  });
  var stepsBox = el("section");
  stepsBox.appendChild(el("h2", words.steps));
  steps(stepsBox);
  root.append(box, rolesBox, votesBox, stepsBox);

  if (!(window.BigInt && window.TextEncoder && (subtle || (window.sha256 && window.nacl)))) {
    result.textContent = words.no_crypto;
    result.setAttribute("data-verdict", "unavailable");
    return;
  }
  checks().then(function (r) { verdict(result, r); }, function () {
    result.textContent = words.no_crypto;
    result.setAttribute("data-verdict", "unavailable");
  });
})();
