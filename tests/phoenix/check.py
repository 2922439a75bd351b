"""Holds the spans Phoenix stored to the OTLP/JSON file the same run wrote.

Usage: check.py TRACE.json PHOENIX_URL. Reads the spans of the file's trace
through Phoenix's REST API (GET /v1/projects/default/spans), waiting until all
have arrived, and checks: the same span names, ids and parent ids (so they nest
as the run did), the GenAI semantic-convention attributes of each span with the
file's values, and Phoenix's reading of them (span kinds LLM, TOOL, AGENT).
Exits 1 with every mismatch listed; standard library only.
"""

import json
import sys
import time
import urllib.request

GENAI_KEYS = {
    "chat": [
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.definitions",
        "promptforge.label",
        "promptforge.round",
    ],
    "execute_tool": [
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ],
    "invoke_agent": ["gen_ai.operation.name", "gen_ai.agent.name", "promptforge.run_id"],
}

# How Phoenix reads each operation: proof it needs no plugin to show the run.
PHOENIX_KINDS = {"chat": "LLM", "execute_tool": "TOOL", "invoke_agent": "AGENT"}

# The spans the prompt in prompt/notes.md makes, in the order they open, with
# the index of each one's parent.
EXPECTED = [
    ("invoke_agent Notes", None),
    ("H1 pass", 0),
    ("section Take notes", 0),
    ("chat scripted", 2),
    ("execute_tool save_note", 2),
    ("chat scripted", 2),
]


def plain(value):
    """An OTLP/JSON AnyValue as a Python value."""
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "boolValue" in value:
        return value["boolValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "arrayValue" in value:
        return [plain(v) for v in value["arrayValue"].get("values", [])]
    raise ValueError(f"unexpected value {value}")


def file_spans(path):
    with open(path, encoding="utf-8") as f:
        request = json.load(f)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for span in spans:
        span["attrs"] = {a["key"]: plain(a["value"]) for a in span.get("attributes", [])}
    return spans


def phoenix_spans(url, trace_id, want):
    deadline = time.monotonic() + 30
    while True:
        with urllib.request.urlopen(f"{url}/v1/projects/default/spans?limit=1000") as response:
            data = json.load(response)["data"]
        spans = [s for s in data if s["context"]["trace_id"] == trace_id]
        if len(spans) >= want or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


def main():
    trace_path, url = sys.argv[1], sys.argv[2].rstrip("/")
    sent = file_spans(trace_path)
    problems = []
    names = [(s["name"], s.get("parentSpanId", "")) for s in sent]
    ids = [s["spanId"] for s in sent]
    expected = [(n, ids[p] if p is not None else "") for n, p in EXPECTED]
    if names != expected:
        problems.append(f"the file's spans are {names}, expected {expected}")
    trace_id = sent[0]["traceId"]
    stored = {s["context"]["span_id"]: s for s in phoenix_spans(url, trace_id, len(sent))}
    if len(stored) != len(sent):
        problems.append(f"Phoenix has {len(stored)} spans of trace {trace_id}, the run sent {len(sent)}")
    for span in sent:
        got = stored.get(span["spanId"])
        where = f"span {span['name']!r} ({span['spanId']})"
        if got is None:
            problems.append(f"{where} is not in Phoenix")
            continue
        if got["name"] != span["name"]:
            problems.append(f"{where} is named {got['name']!r} in Phoenix")
        parent = span.get("parentSpanId") or None
        if got["parent_id"] != parent:
            problems.append(f"{where} has the parent {got['parent_id']} in Phoenix, {parent} in the run")
        operation = span["attrs"].get("gen_ai.operation.name")
        for key in GENAI_KEYS.get(operation, []):
            if key not in span["attrs"]:
                problems.append(f"{where} was sent without {key}")
            elif got["attributes"].get(key) != span["attrs"][key]:
                problems.append(
                    f"{where}: {key} is {got['attributes'].get(key)!r} in Phoenix, "
                    f"{span['attrs'][key]!r} in the run"
                )
        if operation in PHOENIX_KINDS and got["span_kind"] != PHOENIX_KINDS[operation]:
            problems.append(f"{where}: Phoenix reads it as {got['span_kind']}, not {PHOENIX_KINDS[operation]}")
    chats = [s for s in sent if s["attrs"].get("gen_ai.operation.name") == "chat"]
    if [json.loads(s["attrs"]["gen_ai.output.messages"])[0]["parts"][0]["type"] for s in chats] != ["tool_call", "text"]:
        problems.append("the rounds' output messages are not a tool call, then text")
    if problems:
        print("phoenix round trip: MISMATCH", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        sys.exit(1)
    print(f"phoenix round trip: {len(sent)} spans of trace {trace_id} arrived, nested and attributed as sent")


if __name__ == "__main__":
    main()
