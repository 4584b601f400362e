"""`ape-chat serve` through two more OpenAI-compatible clients people use,
neither written by us: Simon Willison's `llm` (its command line, with an
OpenAI-compatible model configured as its docs say) and LangChain's
`ChatOpenAI` (`langchain-openai`). Each answers from the folder, streamed
and not, and follows up on its own conversation. The server runs the
default model, so the answers can be checked for the facts.

usage: other_clients.py BASE_URL LLM_USER_DIR
Exits non-zero on the first failed check; prints one JSON summary line.
Run by tests/it/server.rs with the venv that scripts/setup.sh makes.
"""

import json
import os
import subprocess
import sys

from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI

BASE, LLM_DIR = sys.argv[1], sys.argv[2]
QUESTION = "How long are nightly snapshots kept?"
FOLLOW_UP = "And the monthly ones?"


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAILED: {what}")


# --- llm ----------------------------------------------------------------------
# An OpenAI-compatible model, as llm's documentation configures one.
os.makedirs(LLM_DIR, exist_ok=True)
with open(os.path.join(LLM_DIR, "extra-openai-models.yaml"), "w") as f:
    f.write(f'- model_id: ape-chat\n  model_name: ape-chat\n  api_base: "{BASE}"\n')
env = dict(os.environ, LLM_USER_PATH=LLM_DIR, OPENAI_API_KEY="unused")


def llm(*args):
    r = subprocess.run(["llm", *args], env=env, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"llm {args}: {r.stderr}")
    return r.stdout


streamed = llm("-m", "ape-chat", "-o", "max_tokens", "24", "-o", "temperature", "0", QUESTION)
check("35" in streamed, f"llm, streamed: {streamed!r}")
whole = llm("-m", "ape-chat", "--no-stream", "-o", "max_tokens", "24", QUESTION)
check("35" in whole, f"llm, not streamed: {whole!r}")
# `-c` continues the last conversation: llm sends the earlier turn.
follow = llm("-c", "-o", "max_tokens", "24", FOLLOW_UP)
check("13" in follow, f"llm, follow-up: {follow!r}")

# --- LangChain ----------------------------------------------------------------
chat = ChatOpenAI(base_url=BASE, api_key="unused", model="ape-chat", max_tokens=24, temperature=0,
                  max_retries=0, timeout=600)
one = chat.invoke(QUESTION)
check("35" in one.content, f"langchain invoke: {one.content!r}")
check(one.response_metadata.get("finish_reason") in ("stop", "length"), f"finish reason: {one.response_metadata}")
pieces = [c.content for c in chat.stream(QUESTION)]
check(len(pieces) > 1 and "35" in "".join(pieces), f"langchain stream: {pieces!r}")
history = [HumanMessage(QUESTION), AIMessage(one.content), HumanMessage(FOLLOW_UP)]
after = chat.invoke(history)
check("13" in after.content, f"langchain follow-up: {after.content!r}")
streamed_follow = "".join(c.content for c in chat.stream(history))
check("13" in streamed_follow, f"langchain streamed follow-up: {streamed_follow!r}")

print(json.dumps({
    "llm": {"streamed": streamed.strip(), "not_streamed": whole.strip(), "follow_up": follow.strip()},
    "langchain": {"invoke": one.content, "follow_up": after.content},
}))
