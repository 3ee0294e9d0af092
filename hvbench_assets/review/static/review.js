"use strict";
// Review, adjudication and annotation pages: every action has a key; a saved answer brings the next item at once
// (the server answers a write with the next item, so no page load sits between two items).
const $ = (id) => document.getElementById(id);
const page = document.body.dataset.page;

async function send(url, data) {
  const r = await fetch(url, {method: data === undefined ? "GET" : "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json"}, body: data === undefined ? undefined : JSON.stringify(data)});
  const out = await r.json().catch(() => ({error: r.statusText}));
  if (!r.ok) throw Object.assign(new Error(out.error || r.statusText), {body: out});
  return out;
}
function say(msg, bad) { const s = $("status"); if (s) { s.textContent = msg; s.className = bad ? "bad" : ""; } }
// a status line speaks of the last action only: the next key (or click) clears it before it acts
const MODIFIERS = new Set(["Shift", "Control", "Alt", "Meta", "CapsLock"]);
function clearStatus(e) { if (!e || !MODIFIERS.has(e.key)) say(""); }
function typing(e) { const t = e.target; return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA"); }
function videoKey(e, v) {
  const step = {ArrowLeft: -1, ArrowRight: 1, ",": -0.1, ".": 0.1}[e.key];
  if (e.key === " ") { if (v.paused) v.play(); else v.pause(); return true; }
  if (step !== undefined) { v.pause(); v.currentTime = Math.min(Math.max(0, v.currentTime + step), v.duration || 1e9); return true; }
  return false;
}

// -- start page and log-in ----------------------------------------------------------------------
const nameForm = $("name-form");
if (nameForm) nameForm.onsubmit = async (e) => {
  e.preventDefault();
  try { await send("/login", {name: $("name").value}); location.reload(); } catch (err) { alert(err.message); }
};
const tokenForm = $("token-form");
if (tokenForm) tokenForm.onsubmit = async (e) => {
  e.preventDefault();
  try { await send("/login", {token: $("token").value}); location.href = tokenForm.dataset.next || "/"; }
  catch (err) { alert(err.message); }
};

// -- shared by the item pages ------------------------------------------------------------------------
function settleFocus() {  // after a save the keys belong to the page again, never to a text field or a button
  const a = document.activeElement;
  if (a && a !== document.body && a.blur) a.blur();
}
function requestId() {  // one idempotency key per shown item: a double press or a resent request stores once
  const b = new Uint8Array(12); crypto.getRandomValues(b);
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
function watched(v) {  // seconds of the clip the browser actually played
  let t = 0;
  for (let i = 0; i < v.played.length; i++) t += v.played.end(i) - v.played.start(i);
  return Math.round(t * 100) / 100;
}
function progress(it) {
  const total = it.done + it.remaining;
  $("progress").max = Math.max(total, 1); $("progress").value = it.done;
  $("progress-text").textContent = `${it.done} done · ${it.remaining} left`;
  $("guideline").textContent = it.guideline || "";
}
// buttons act on click only and never keep the focus (Space and Enter stay the page's keys)
document.querySelectorAll("button[data-key]").forEach((b) => {
  b.tabIndex = -1;
  b.addEventListener("mousedown", (e) => e.preventDefault());
  b.addEventListener("click", () => document.dispatchEvent(new KeyboardEvent("keydown", {key: b.dataset.key, bubbles: true})));
});
// decision -> next item shown, in ms (read by the browser test and benchmarks/review_latency.py)
window.hvbenchTimings = [];
let pressedAt = null;
function shown() {
  if (pressedAt === null) return;
  const t0 = pressedAt; pressedAt = null;
  requestAnimationFrame(() => window.hvbenchTimings.push(performance.now() - t0));
}

// -- review and adjudication ----------------------------------------------------------------------
if (page === "review" || page === "adjudicate") {
  const adjudicating = page === "adjudicate";
  const reasons = [...document.querySelectorAll("#reasons li")].map((li) => li.dataset.reason);
  let item, phase, blind, started, rid, proposed = null, lastDecision = null, busy = false;
  const skip = [];
  const v = $("video");

  const setPhase = (p) => {
    phase = p;
    document.querySelectorAll(".phase").forEach((el) => {
      el.hidden = !(el.id === "phase-" + p || (el.id === "phase-reveal" && ["correct", "reject"].includes(p) && proposed !== null));
    });
    $("write").hidden = true; $("other").hidden = true;
    const mine = $("to-pick");
    if (mine) mine.hidden = !(blind && proposed !== null && blind !== proposed);
  };
  const mark = (letter, cls) => document.querySelectorAll("#options li").forEach((li) =>
    li.classList.toggle(cls, li.dataset.letter === letter));

  function render(it) {
    item = it;
    $("item").hidden = !it; $("empty").hidden = !!it;
    settleFocus();
    $("undo").hidden = !lastDecision;
    if (!it) { shown(); return; }
    $("task").textContent = `${it.abbrev} (${it.task})`; $("clip").textContent = it.video_id;
    $("qlink").href = "/questions/" + it.question_id; $("remaining").textContent = it.remaining;
    progress(it);
    v.src = it.video; $("question").textContent = it.question;
    const ol = $("options"); ol.innerHTML = "";
    it.options.forEach((o, i) => {
      const li = document.createElement("li");
      li.dataset.letter = o.letter; li.innerHTML = `<kbd>${i + 1}</kbd> `; li.append(o.text);
      li.onclick = () => { clearStatus(); choose(i); }; ol.append(li);
    });
    $("corrected-text").value = ""; $("reason-text").value = "";
    blind = undefined; proposed = null; started = performance.now(); rid = requestId();
    $("flag").hidden = !it.flag; $("flag-answers").hidden = true;
    if (it.flag) $("flag").textContent = `Flagged by an evaluation: ${it.flag.reasons.join("; ")} (${it.flag.detail}). ` +
      "A second look: your pick shows the proposed answer and the models' answers, then you decide.";
    if (adjudicating) {
      proposed = it.answer;
      mark(it.answer, "proposed");
      const votes = Object.entries(it.votes).map(([who, v]) => `${who}: ${v.action}` +
        (v.corrected_answer ? " → " + v.corrected_answer : "") + (v.corrected_text ? ` → "${v.corrected_text}"` : "") +
        (v.reason ? ` (${v.reason}${v.reason_text ? ": " + v.reason_text : ""})` : "") +
        (v.blind_choice ? `, blind pick ${v.blind_choice}` : ""));
      $("votes").textContent = `Proposed answer ${it.answer}. ` + votes.join(" · ");
      setPhase("settle");
    } else {
      setPhase("blind");
    }
    say("");
    shown();
  }

  function showReveal(answer, text, flag) {
    proposed = answer;
    $("proposed").textContent = text;
    const answers = (flag && flag.answers) || [];
    $("flag-answers").hidden = !answers.length;
    $("flag-answers").textContent = "The models chose: " + answers.map((a) =>
      `${a.model}: "${a.text}" (${a.right ? "right" : "wrong"})`).join(" · ");
    $("match").textContent = blind === null ? "(you could not tell)" : blind === answer ? "(your pick)" : "(not your pick)";
    mark(answer, "proposed");
    setPhase("reveal");
  }

  async function decide(extra) {
    if (busy || !item) return;
    busy = true;
    const data = {question_id: item.question_id, content_hash: item.content_hash, request_id: rid,
      shown_order: item.options.map((o) => o.letter), blind_choice: blind === undefined ? null : blind,
      seconds_spent: (performance.now() - started) / 1000, watched_s: watched(v), ...extra};
    if (adjudicating) { data.action = "adjudicate"; data.blind_choice = null; data.shown_order = null; }
    try {
      const out = await send("/api/decisions?skip=" + skip.join(","), data);
      if (!out.stored) { pressedAt = null; showReveal(out.answer, out.answer_text, out.flag); return; }
      lastDecision = out.decision_id;
      render(out.next);
      say(`saved: ${out.action}${out.duplicate ? " (already stored)" : ""} · u undoes it`);
    } catch (err) { pressedAt = null; say(err.message, true); settleFocus(); } finally { busy = false; }
  }

  async function undo() {
    if (busy || !lastDecision) return;
    busy = true;
    try {
      const out = await send("/api/undo", {decision_id: lastDecision});
      lastDecision = null;
      const i = skip.indexOf(out.item.question_id);
      if (i >= 0) skip.splice(i, 1);
      render(out.item);
      say("undone: decide this question again");
    } catch (err) { say(err.message, true); } finally { busy = false; }
  }

  function choose(i) {
    if (busy || !item || i >= item.options.length) return;
    const letter = item.options[i].letter;
    if (phase === "blind") {  // one key: the pick is stored as an accept when it is the proposed answer
      blind = letter; mark(letter, "chosen");
      decide({action: "pick"});
    } else if (phase === "reject") reject(i);
    else if (phase === "settle") decide(letter === proposed ? {} : {corrected_answer: letter});
    else if (["reveal", "correct"].includes(phase)) decide(letter === proposed ? {action: "accept"} : {action: "correct", corrected_answer: letter});
  }
  function reject(i) {
    if (i >= reasons.length) return;
    if (reasons[i] === "other") { $("other").hidden = false; $("reason-text").focus(); return; }
    decide({action: "reject", reason: reasons[i]});
  }
  function write() { if (phase !== "correct") setPhase("correct"); $("write").hidden = false; $("corrected-text").focus(); }
  function back() { setPhase(adjudicating ? "settle" : proposed !== null ? "reveal" : "blind"); settleFocus(); }
  async function next() {
    skip.push(item.question_id);
    render((await send(`/api/next/${page}?skip=` + skip.join(","))).item);
  }
  function saveText(target) {
    if (target.id === "corrected-text") decide({action: "correct", corrected_text: target.value});
    else if (target.id === "reason-text") decide({action: "reject", reason: "other", reason_text: target.value});
  }
  document.querySelectorAll("#reasons li").forEach((li, i) => { li.onclick = () => { clearStatus(); reject(i); }; });
  document.querySelectorAll("button[data-save]").forEach((b) => { b.onclick = () => { clearStatus(); saveText($(b.dataset.save)); }; });

  document.addEventListener("keydown", (e) => {
    if (typing(e)) {
      if (e.key === "Enter" || e.key === "Escape") clearStatus(e);
      if (e.key === "Escape") { e.target.blur(); back(); }
      else if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); saveText(e.target); }
      return;
    }
    if ((e.ctrlKey || e.metaKey) && e.key === "z") { e.preventDefault(); clearStatus(e); undo(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    clearStatus(e);
    const k = e.key;
    if (k === "u") { e.preventDefault(); undo(); return; }
    if (!item) return;
    let handled = true;
    if (/^[0-9a-z]$/.test(k)) pressedAt = performance.now();
    if (videoKey(e, v)) { /* handled */ }
    else if (/^[1-9]$/.test(k)) choose(+k - 1);
    else if (k === "0" && phase === "blind") { blind = null; decide({action: "pick"}); }
    else if (k === "a" && ["reveal", "settle", "correct"].includes(phase)) decide(adjudicating ? {} : {action: "accept"});
    else if (k === "c" && phase === "reveal") {  // to the blind pick when it differs; otherwise choose the option
      if (blind && blind !== proposed) decide({action: "correct", corrected_answer: blind}); else setPhase("correct");
    }
    else if (k === "r" && phase !== "reject") setPhase("reject");
    else if (k === "w" && phase !== "reject") write();
    else if (k === "Escape") back();
    else if (k === "n") next().catch((err) => say(err.message, true));
    else handled = false;
    if (handled) e.preventDefault();
    if (!busy) pressedAt = null;  // only a key that sent a decision is timed
  });
  render(JSON.parse($("item-data").textContent));
}

// -- annotation ---------------------------------------------------------------------------------
if (page === "annotate") {
  let item, start = null, started, busy = false;
  const skip = [];
  const v = $("video");
  v.addEventListener("timeupdate", () => { $("now").textContent = v.currentTime.toFixed(1); });
  v.addEventListener("seeked", () => { $("now").textContent = v.currentTime.toFixed(1); });

  function render(it) {
    item = it;
    $("item").hidden = !it; $("empty").hidden = !!it;
    settleFocus();  // the last item's text field must not swallow this item's keys
    if (!it) return;
    progress(it);
    $("tasks").textContent = it.tasks.join(" + ") + (it.kind === "action" ? ` (target track ${it.track_ids.join(", ")})` : "");
    $("clip").textContent = it.video_id; $("qlink").href = "/questions/" + it.question_id;
    $("remaining").textContent = it.remaining; v.src = it.video;
    $("count-form").hidden = it.kind !== "count"; $("action-form").hidden = it.kind !== "action";
    $("count").value = ""; $("action").value = ""; $("start").textContent = "–";
    start = null; started = performance.now();
  }
  async function save(extra) {
    if (busy) return;
    busy = true;
    try {
      const out = await send("/api/annotations?skip=" + skip.join(","), {question_id: item.question_id, ...extra,
        seconds_spent: (performance.now() - started) / 1000, watched_s: watched(v)});
      render(out.next);
      say(`saved ${out.annotation_id}: the sensor rebuilds the question`);
    } catch (err) {
      say(err.message, true);
      settleFocus();
      // a count far from L2's estimate is stored only when the annotator confirms it explicitly
      if (err.body && err.body.needs_confirmation && !extra.confirm && confirm(err.message + "\n\nStore it anyway?")) {
        busy = false;
        return save({...extra, confirm: true});
      }
    } finally { busy = false; }
  }
  function submit() {
    if (item.kind === "count") return save({count: $("count").value});
    if (!$("action").value.trim()) { $("action").focus(); return say("type the action first (e)", true); }
    if (start === null) return say("press t at the second the action starts", true);
    return save({action: $("action").value, start_s: start});
  }
  document.addEventListener("keydown", (e) => {
    if (!item) return;
    if (typing(e)) {
      if (e.key === "Enter" || e.key === "Escape") clearStatus(e);
      if (e.key === "Escape") e.target.blur();
      else if (e.key === "Enter") { e.preventDefault(); submit(); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    clearStatus(e);
    let handled = true;
    const k = e.key;
    if (videoKey(e, v)) { /* handled */ }
    else if (k === "Enter") submit();
    else if (item.kind === "count" && /^[0-9]$/.test(k)) { $("count").value += k; $("count").focus(); }
    else if (item.kind === "action" && k === "t") { start = v.currentTime; $("start").textContent = Math.round(start); }
    else if (item.kind === "action" && k === "e") $("action").focus();
    else if (item.kind === "action" && k === "o") save({ongoing: true, action: $("action").value || null});
    else if (item.kind === "action" && k === "x") save({none: true});
    else if (k === "Escape") settleFocus();
    else if (k === "n") { skip.push(item.question_id); send("/api/next/annotate?skip=" + skip.join(",")).then((o) => render(o.item)); }
    else handled = false;
    if (handled) e.preventDefault();
  });
  render(JSON.parse($("item-data").textContent));
}
