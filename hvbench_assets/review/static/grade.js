"use strict";
// The grade page: one key per verdict (the keys come from the server: core/curation/grading.py KEYS); the server
// answers a grade with the next reply. Uses review.js's helpers (send, say, clearStatus, settleFocus, requestId).
if (page === "grade") {
  const keys = JSON.parse($("grade-keys").textContent);
  let item, last = null, started, rid, busy = false;
  const skip = [];

  function render(it) {
    item = it;
    $("item").hidden = !it; $("empty").hidden = !!it;
    $("undo").hidden = !last;
    settleFocus();
    if (!it) return;
    $("task").textContent = `${it.abbrev} (${it.task})`; $("remaining").textContent = it.remaining;
    $("progress").max = Math.max(it.done + it.remaining, 1); $("progress").value = it.done;
    $("progress-text").textContent = `${it.done} graded · ${it.remaining} left`;
    $("question").textContent = it.question; $("reference").textContent = it.reference; $("reply").textContent = it.reply;
    started = performance.now(); rid = requestId();
  }

  async function grade(verdict) {
    if (busy || !item) return;
    busy = true;
    try {
      const out = await send("/api/grades?skip=" + skip.join(","), {reply_id: item.reply_id, reply_sha: item.reply_sha,
        verdict, request_id: rid, seconds_spent: (performance.now() - started) / 1000});
      last = item;
      render(out.next);
      say(`saved: ${verdict}${out.duplicate ? " (already stored)" : ""} · u shows that reply again`);
    } catch (err) { say(err.message, true); } finally { busy = false; }
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    clearStatus(e);
    const k = e.key;
    let handled = true;
    if (k in keys) grade(keys[k]);
    else if (k === "n" && item) {
      skip.push(item.reply_id);
      send("/api/grades/next?skip=" + skip.join(",")).then((o) => render(o.item)).catch((err) => say(err.message, true));
    } else if (k === "u" && last) { const again = last; last = null; render(again); say("grade this reply again"); }
    else handled = false;
    if (handled) e.preventDefault();
  });
  render(JSON.parse($("item-data").textContent));
}
