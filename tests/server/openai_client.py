"""`ape-chat serve` through the official `openai` package (a client we did
not write), plus raw HTTP for what that client cannot send (bad JSON,
invalid UTF-8, a slow body, a dropped connection).

usage: openai_client.py BASE_URL KEY_BASE_URL KEY SERVER_PID
  BASE_URL      a server with no key, --queue 8, --timeout 2, --metrics
  KEY_BASE_URL  a server started with --api-key KEY (no --metrics)
Exits non-zero on the first failed check; prints one JSON summary line
(the load test's figures) on success. Run by tests/it/server.rs.
"""

import http.client
import json
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import openai
from prometheus_client.parser import text_string_to_metric_families

BASE, KEY_BASE, KEY, PID = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
client = openai.OpenAI(base_url=BASE, api_key="unused", max_retries=0, timeout=300)
QUESTION = "How long are nightly snapshots kept?"


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")


def paths_inside(sources):
    for s in sources:
        p = s["path"]
        check(not p.startswith("/") and ".." not in p.split("/"), f"source inside the folder: {p}")


def health():
    with urllib.request.urlopen(BASE.removesuffix("/v1") + "/health") as r:
        return json.load(r)


# --- a plain completion ------------------------------------------------------
c = client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=12
)
d = c.to_dict()
check(d["object"] == "chat.completion", "object")
check(len(c.choices) == 1 and c.choices[0].message.role == "assistant", "one assistant choice")
check(c.choices[0].message.content.strip() != "", "an answer")
check(c.choices[0].finish_reason in ("stop", "length"), "finish_reason")
check(d["usage"]["completion_tokens"] >= 1 and d["usage"]["prompt_tokens"] > 20, "usage counts")
check(d["usage"]["ttft_ms"] > 0, "usage carries the time to first token")
check(any(s["path"] == "backup-policy.md" for s in d["sources"]), "sources name the policy")
paths_inside(d["sources"])

# --- a streamed completion ---------------------------------------------------
text, finish, last = "", None, None
for chunk in client.chat.completions.create(
    model="ape-chat",
    messages=[{"role": "user", "content": QUESTION}],
    max_tokens=12,
    stream=True,
):
    if chunk.choices:
        text += chunk.choices[0].delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
    else:
        last = chunk.to_dict()
check(text.strip() != "", "streamed text")
check(finish in ("stop", "length"), "a closing chunk with its finish reason")
check(last is not None and last["sources"] and last["usage"]["ttft_ms"] > 0, "sources and usage before [DONE]")
paths_inside(last["sources"])

# --- a follow-up -------------------------------------------------------------
# The earlier turn reaches retrieval: the on-call paragraph is found for a
# question that names nothing.
follow = "And when do they start shadowing it?"
alone = client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": follow}], max_tokens=8
).to_dict()
after = client.chat.completions.create(
    model="ape-chat",
    messages=[
        {"role": "system", "content": "ignored: the folder's prompt is fixed"},
        {"role": "user", "content": "When does a new engineer join the on-call rotation?"},
        {"role": "assistant", "content": "In their eighth week."},
        {"role": "user", "content": follow},
    ],
    max_tokens=8,
).to_dict()
shadow = lambda d: any("shadow" in s["text"] for s in d["sources"])  # noqa: E731
check(shadow(after), f"the follow-up finds the on-call paragraph: {[s['path'] for s in after['sources']]}")
check(after["usage"]["conversation_turns"] == 1, "the earlier turn is in the prompt")
check(alone["usage"]["conversation_turns"] == 0, "and only there")
followup_found_alone = shadow(alone)

# --- whole files and top_k: ape-chat's own fields, through extra_body ------------
chunks = health()["folder"]["chunks"]
every = client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=4,
    extra_body={"top_k": "all"},
).to_dict()
check(len(every["sources"]) == chunks, f"top_k all reads all {chunks} chunks: {len(every['sources'])}")
one = client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=4,
    extra_body={"top_k": 1, "files": ["field-notes-kestrels.md"]},
).to_dict()
kestrels = [s for s in one["sources"] if s["path"] == "field-notes-kestrels.md"]
check(kestrels and len(one["sources"]) == len(kestrels) + 1,
      f"the file whole plus the best other chunk: {[s['path'] for s in one['sources']]}")

# --- what other clients send: fields OpenAI's API ignores, text parts, 64-bit
# seeds, stream_options with fields of its own --------------------------------
lenient = client.chat.completions.create(
    model="ape-chat",
    messages=[{"role": "user", "content": [{"type": "text", "text": "How long are nightly"},
                                           {"type": "text", "text": "snapshots kept?"}]}],
    max_tokens=6, seed=2**63 + 5, store=False, metadata={"from": "test"}, parallel_tool_calls=False,
    extra_body={"frobnicate": 1},
).to_dict()
check(any(s["path"] == "backup-policy.md" for s in lenient["sources"]), "text parts are the question")
text, usage_chunk = "", None
for chunk in client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=6, stream=True,
    extra_body={"stream_options": {"include_usage": True, "include_obfuscation": False}},
):
    if chunk.choices:
        text += chunk.choices[0].delta.content or ""
    elif chunk.usage is not None:
        usage_chunk = chunk
check(usage_chunk is not None and usage_chunk.usage.completion_tokens >= 1, "include_usage: a final usage chunk")

# --- logprobs and top_logprobs ------------------------------------------------
def joined(content):
    return b"".join(bytes(t.bytes) for t in content).decode("utf-8", errors="replace")


base = client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=16,
    logprobs=True, top_logprobs=3,
)
lp = base.choices[0].logprobs.content
text = base.choices[0].message.content
check(len(lp) >= 2, f"one entry per answer token: {len(lp)}")
check(joined(lp) == text, f"the tokens spell the answer: {joined(lp)!r} != {text!r}")
for t in lp:
    check(t.logprob <= 0 and len(t.top_logprobs) == 3, f"a log-probability and 3 alternatives: {t}")
    tops = [a.logprob for a in t.top_logprobs]
    check(tops == sorted(tops, reverse=True), f"alternatives most likely first: {tops}")
    # Greedy (no temperature): each token is its place's most likely one.
    check(t.token == t.top_logprobs[0].token and abs(t.logprob - tops[0]) < 1e-6,
          f"greedy picks the top alternative: {t}")
    check(t.token == bytes(t.bytes).decode("utf-8", errors="replace"), "token is its bytes")
plain = client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=16)
check(plain.choices[0].logprobs is None, "no logprobs unless asked")
check(plain.choices[0].message.content == text, "asking for logprobs changes no answer")
streamed = []
for chunk in client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=16,
    logprobs=True, top_logprobs=3, stream=True,
):
    if chunk.choices and chunk.choices[0].logprobs is not None:
        streamed += chunk.choices[0].logprobs.content
check([(t.token, round(t.logprob, 5)) for t in streamed] == [(t.token, round(t.logprob, 5)) for t in lp],
      "streamed logprobs are the same tokens with the same values")

# --- stop: a text split across tokens, streamed and not -------------------------
# A stop made of the end of one token and the start of the next, found
# nowhere earlier in the answer.
pieces = [bytes(t.bytes).decode("utf-8", errors="replace") for t in lp]
stop, at = None, 0
for i in range(len(pieces) - 1):
    at += len(pieces[i])
    if i > 0 and pieces[i] and pieces[i + 1]:
        candidate = pieces[i][-1] + pieces[i + 1][0]
        if text.find(candidate) == at - 1:
            stop = candidate
            break
check(stop is not None, f"a stop across two tokens of {pieces}")
want = text[: text.find(stop)]
stopped = client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=16,
    stop=[stop, "never-in-any-answer"], logprobs=True,
)
got = stopped.choices[0].message.content
check(got == want, f"the answer ends before the stop {stop!r}: {got!r} != {want!r}")
check(stopped.choices[0].finish_reason == "stop", f"finish_reason stop: {stopped.choices[0].finish_reason}")
check(joined(stopped.choices[0].logprobs.content).startswith(want), "logprobs of the shown tokens")
text_s, finish_s = "", None
for chunk in client.chat.completions.create(
    model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=16,
    stop=stop, stream=True,
):
    if chunk.choices:
        text_s += chunk.choices[0].delta.content or ""
        finish_s = chunk.choices[0].finish_reason or finish_s
check(text_s == want and finish_s == "stop", f"streamed, the same: {text_s!r} {finish_s}")

# --- a question past the model's window: 400, streamed or not ------------------
long_question = " ".join(["nightly snapshots backup policy keys"] * 12_000)
for stream in (False, True):
    try:
        client.chat.completions.create(
            model="ape-chat", messages=[{"role": "user", "content": long_question}], max_tokens=4,
            stream=stream,
        )
        check(False, "a question past the window is refused")
    except openai.BadRequestError as e:
        check(e.body["code"] == "context_length_exceeded" and "positions" in e.body["message"],
              f"names the window: {e.body}")


# --- /metrics, read by Prometheus' own parser ---------------------------------
def scrape(base=BASE, key=None):
    req = urllib.request.Request(base.removesuffix("/v1") + "/metrics")
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(req) as r:
        check(r.headers["content-type"].startswith("text/plain; version=0.0.4"), "the text format")
        families = {f.name: f for f in text_string_to_metric_families(r.read().decode())}
    samples = {}
    for f in families.values():
        for s in f.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return families, samples


families, before = scrape()
for name, kind in [("apechat_requests", "counter"), ("apechat_answers", "counter"),
                   ("apechat_ttft_seconds", "histogram"), ("apechat_decode_tokens_per_second", "histogram"),
                   ("apechat_questions_waiting", "gauge"), ("apechat_requests_in_flight", "gauge"),
                   ("apechat_states", "counter"), ("apechat_state_cache_bytes", "gauge"),
                   ("apechat_index_stage", "gauge"), ("apechat_index_files_pending", "gauge"),
                   ("apechat_folder_chunks", "gauge"), ("apechat_completion_tokens", "counter")]:
    check(name in families and families[name].type == kind, f"{name} is a {kind}: {families.get(name)}")
ok = ("apechat_requests_total", (("endpoint", "/v1/chat/completions"), ("status", "200")))
bad = ("apechat_requests_total", (("endpoint", "/v1/chat/completions"), ("status", "400")))
answered = ("apechat_answers_total", (("outcome", "answered"),))
ttft_n = ("apechat_ttft_seconds_count", ())
tokens = ("apechat_completion_tokens_total", ())
check(before[ok] >= 10 and before[bad] >= 2, f"earlier requests counted: {before[ok]}, {before.get(bad)}")
check(before[("apechat_folder_chunks", ())] == health()["folder"]["chunks"], "the folder's chunks")
states = sum(v for (n, _), v in before.items() if n == "apechat_states_total")
check(states > 0, "states read are counted")
client.chat.completions.create(model="ape-chat", messages=[{"role": "user", "content": QUESTION}], max_tokens=4)
try:
    client.chat.completions.create(model="ape-chat", messages=[{"role": "user", "content": QUESTION}], n=2)
except openai.BadRequestError:
    pass
_, after = scrape()
check(after[ok] == before[ok] + 1, f"one more 200: {before[ok]} -> {after[ok]}")
check(after[bad] == before[bad] + 1, f"one more 400: {before[bad]} -> {after[bad]}")
check(after[answered] == before[answered] + 1, "one more answered")
check(after[ttft_n] == before[ttft_n] + 1, "one more time to first token")
check(after[tokens] > before[tokens], "answer tokens counted")
check(after[("apechat_requests_in_flight", ())] == 0, "nothing in flight")
try:
    scrape(KEY_BASE, KEY)
    check(False, "/metrics is off without --metrics")
except urllib.error.HTTPError as e:
    check(e.code == 404 and "--metrics" in json.load(e)["error"]["message"], f"off: {e.code}")

# --- the key -----------------------------------------------------------------
keyed = openai.OpenAI(base_url=KEY_BASE, api_key="wrong", max_retries=0)
try:
    keyed.models.list()
    check(False, "a wrong key is refused")
except openai.AuthenticationError as e:
    check(e.status_code == 401 and e.body["code"] == "invalid_api_key", "401 invalid_api_key")
good = openai.OpenAI(base_url=KEY_BASE, api_key=KEY, max_retries=0)
check([m.id for m in good.models.list()] != [], "the right key lists the model")
check([m.id for m in client.models.list()] == [m.id for m in good.models.list()], "one model")


# --- 400s --------------------------------------------------------------------
def refused(status, says, **kw):
    try:
        client.chat.completions.create(model="ape-chat", **kw)
    except openai.APIStatusError as e:
        check(e.status_code == status, f"{kw}: {e.status_code} != {status}")
        check(says in e.body["message"], f"{kw}: {e.body['message']!r} lacks {says!r}")
        check(e.body["type"], "an OpenAI error object")
        return
    check(False, f"{kw} was accepted")


msgs = [{"role": "user", "content": QUESTION}]
refused(400, "n must be 1", messages=msgs, n=2)
refused(400, "tools", messages=msgs, tools=[{"type": "function", "function": {"name": "f"}}])
refused(400, "no messages", messages=[])
refused(400, "last message", messages=[{"role": "assistant", "content": "hi"}])
refused(400, "invalid type", messages=msgs, extra_body={"max_tokens": "ten"})
refused(400, "missing field `messages`", extra_body={}, messages=openai.NOT_GIVEN)
refused(400, "not an indexed file", messages=msgs, extra_body={"files": ["no-such-notes.md"]})
refused(400, "only text parts", messages=[{"role": "user", "content": [
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]}])
refused(400, "top-k must be", messages=msgs, extra_body={"top_k": "many"})
refused(413, "larger than", messages=[{"role": "user", "content": "x" * (2 << 20)}])


def raw(body: bytes):
    req = urllib.request.Request(BASE + "/chat/completions", data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


status, err = raw(b'{"messages": [')
check(status == 400 and "not a chat request" in err["error"]["message"], f"malformed JSON: {status} {err}")
status, err = raw(b'{"messages":[{"role":"user","content":"\xff\xfe"}]}')
check(status == 400 and "UTF-8" in err["error"]["message"], f"invalid UTF-8: {status} {err}")

# --- a slow client (the server runs with --timeout 2) -------------------------
u = urllib.parse.urlparse(BASE)
s = socket.create_connection((u.hostname, u.port))
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mes")
t = time.monotonic()
s.settimeout(30)
reply = s.recv(4096).decode(errors="replace")
s.close()
check(reply.startswith("HTTP/1.1 408"), f"a slow body gets 408: {reply[:80]!r}")
check(time.monotonic() - t < 15, "and in about the timeout")

# --- a client that disconnects stops its answer -------------------------------
before = health()["cancelled"]
conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
conn.request(
    "POST",
    "/v1/chat/completions",
    body=json.dumps({"messages": [{"role": "user", "content": "Write a very long story about backups."}],
                     "max_tokens": 400, "stream": True}),
    headers={"content-type": "application/json"},
)
resp = conn.getresponse()
check(resp.status == 200, f"stream status {resp.status}")
got = 0
while got < 3:
    line = resp.fp.readline().decode()
    check(line != "", "the stream ended before three tokens")
    got += line.startswith("data: ") and '"content"' in line
conn.sock.shutdown(socket.SHUT_RDWR)
conn.close()
deadline = time.monotonic() + 30
while health()["cancelled"] == before:
    check(time.monotonic() < deadline, "the dropped stream's answer was cancelled")
    time.sleep(0.1)

# --- load: 32 clients x 4 questions, --queue 1 ---------------------------------
results, lock = [], threading.Lock()
questions = [QUESTION, "Where are the encryption keys kept?", "When was Orbit 4.2 released?",
             "When does a new engineer join the on-call rotation?"]


def user(i):
    local = openai.OpenAI(base_url=BASE, api_key="unused", max_retries=0, timeout=600)
    for q in questions:
        t0 = time.monotonic()
        try:
            stream = local.chat.completions.create(
                model="ape-chat", messages=[{"role": "user", "content": q}], max_tokens=4, stream=True)
            first = None
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content and first is None:
                    first = time.monotonic() - t0
            with lock:
                results.append(("answered", first))
        except openai.RateLimitError as e:
            with lock:
                results.append(("refused", e.response.headers.get("retry-after")))
        except Exception as e:  # noqa: BLE001 - anything else is a failure to report
            with lock:
                results.append(("other", repr(e)))


threads = [threading.Thread(target=user, args=(i,)) for i in range(32)]
started = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=900)
elapsed = time.monotonic() - started
check(all(not t.is_alive() for t in threads), "every client finished")
kinds = [k for k, _ in results]
check(len(results) == 128 and kinds.count("other") == 0, f"answered or refused, nothing else: {[r for r in results if r[0] == 'other'][:3]}")
check(all(v is not None for k, v in results if k == "refused"), "429s carry Retry-After")
ttfts = sorted(v for k, v in results if k == "answered" and v is not None)
check(ttfts, "some answered")
pct = lambda p: ttfts[min(len(ttfts) - 1, int(p * len(ttfts)))]  # noqa: E731
with open(f"/proc/{PID}/status") as f:
    peak_kb = next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))
h = health()
check(h["status"] == "ok" and h["in_flight"] == 0 and h["waiting"] == 0, f"healthy afterwards: {h}")
print(json.dumps({
    "load": {"clients": 32, "questions_each": 4, "answered": kinds.count("answered"),
             "refused": kinds.count("refused"), "ttft_p50_s": round(pct(0.5), 3),
             "ttft_p95_s": round(pct(0.95), 3), "wall_s": round(elapsed, 1),
             "peak_rss_mib": round(peak_kb / 1024, 1)},
    "follow_up_found_alone": followup_found_alone,
    "openai": openai.__version__,
}))
