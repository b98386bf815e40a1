"""Drives papersearch's MCP server with the official Python MCP SDK (PyPI `mcp`).

usage: mcp_client.py http URL EXPECTED.json
       mcp_client.py stdio BINARY EXPECTED.json
       mcp_client.py fresh BINARY N   (the first search on a fresh data folder finds N papers)

EXPECTED.json holds what the HTTP API answered for the same requests:
{"search": {"request": {...}, "response": {...}}, "similar": {...}, "paper": {...}, "collections": {...}}.
Prints "ok" and exits 0 when every check holds; otherwise prints what failed and exits 1.
"""
import asyncio
import json
import os
import sys

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def ranking(resp):
    return [(h["id"], h["rank"], round(h["score"], 6)) for h in resp["results"]]


async def exercise(session, expected):
    init = await session.initialize()
    check(init.server_info.name == "papersearch", f"server name {init.server_info.name!r}")

    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in ("search", "similar", "get_paper", "related_for_text", "list_collections", "recommend", "import", "import_status"):
        check(name in tools, f"tool {name} missing from {sorted(tools)}")
        if name in tools:
            check(tools[name].input_schema.get("type") == "object", f"{name}: input schema {tools[name].input_schema}")
            check(tools[name].output_schema is not None, f"{name}: no output schema")
            # What the tool does to the store, as the SDK reads it: only
            # import writes, and it destroys nothing.
            hints = tools[name].annotations
            want_read_only = name != "import"
            check(hints is not None and hints.read_only_hint is want_read_only
                  and (want_read_only or hints.destructive_hint is False),
                  f"{name}: annotations {hints}")

    def conforms(name, result):
        try:
            jsonschema.validate(result.structured_content, tools[name].output_schema)
        except jsonschema.ValidationError as e:
            failures.append(f"{name}: structured result does not match its output schema: {e.message}")

    # search: the same papers, ranks and scores as POST /v1/search.
    want = expected["search"]
    got = await session.call_tool("search", dict(want["request"], max_chars=120))
    check(not got.is_error, f"search failed: {got.content}")
    if not got.is_error:
        conforms("search", got)
        check(ranking(got.structured_content) == ranking(want["response"]),
              f"search: {ranking(got.structured_content)} != HTTP {ranking(want['response'])}")
        for h in got.structured_content["results"]:
            check(len(h["paper"]["abstract"]) <= 120, f"search: abstract of {len(h['paper']['abstract'])} characters past max_chars")
        check(json.loads(got.content[0].text) == got.structured_content, "search: text content is not the structured result")

    # similar: the same as GET /v1/papers/{id}/similar.
    want = expected["similar"]
    got = await session.call_tool("similar", want["request"])
    check(not got.is_error, f"similar failed: {got.content}")
    if not got.is_error:
        conforms("similar", got)
        check(ranking(got.structured_content) == ranking(want["response"]),
              f"similar: {ranking(got.structured_content)} != HTTP {ranking(want['response'])}")

    # get_paper: the paper GET /v1/papers/{id} returns.
    want = expected["paper"]
    got = await session.call_tool("get_paper", {"id": want["id"]})
    check(not got.is_error, f"get_paper failed: {got.content}")
    if not got.is_error:
        conforms("get_paper", got)
        check(got.structured_content == want, f"get_paper: {got.structured_content} != HTTP {want}")

    # list_collections: what GET /v1/collections answers.
    got = await session.call_tool("list_collections", {})
    check(not got.is_error and got.structured_content == expected["collections"],
          f"list_collections: {got.structured_content} != HTTP {expected['collections']}")
    if not got.is_error:
        conforms("list_collections", got)

    # recommend: the same papers, ranks and scores as GET
    # /v1/collections/{tag}/recommendations, each naming its nearest member.
    rec = expected["recommend"]
    got = await session.call_tool("recommend", rec["request"])
    check(not got.is_error, f"recommend failed: {got.content}")
    if not got.is_error:
        conforms("recommend", got)
        check(ranking(got.structured_content) == ranking(rec["response"]),
              f"recommend: {ranking(got.structured_content)} != HTTP {ranking(rec['response'])}")
        check(all(h["because"] for h in got.structured_content["results"]), f"recommend: a result names no member: {got.structured_content}")
    # A collection's papers as a resource.
    coll = await session.read_resource("papersearch://collections/" + rec["request"]["tag"])
    listed = json.loads(coll.contents[0].text)
    check(len(listed["papers"]) == 1 and listed["papers"][0]["uri"].startswith("papersearch://papers/"), f"collection resource: {listed}")

    # related_for_text: each result names the draft's sentence it answers.
    draft = ["Robots can learn manipulation skills by watching videos of people.", "Language models simulate users poorly."]
    got = await session.call_tool("related_for_text", {"text": " ".join(draft), "limit": 4})
    check(not got.is_error, f"related_for_text failed: {got.content}")
    if not got.is_error:
        conforms("related_for_text", got)
        results = got.structured_content["results"]
        check(0 < len(results) <= 4, f"related_for_text: {len(results)} results")
        for r in results:
            check(r["draft_sentence"] in draft and r["matched_sentence"], f"related_for_text result {r}")

    # Invalid arguments: tool errors with the API's readable reasons.
    for name, args, reason in [
        ("search", {"query": "graphs", "limit": 0}, "limit"),
        ("search", {"query": "graphs", "mode": "fuzzy"}, "mode"),
        ("search", {}, "query"),
        ("similar", {"id": "no-such-paper"}, "not found"),
        ("similar", {"id": want["id"], "aspect": "colour"}, "aspect"),
        ("get_paper", {"id": "no-such-paper"}, "not found"),
        ("get_paper", {"id": "bad\u0000id"}, "id"),
        ("related_for_text", {"text": ""}, "text"),
        ("recommend", {"tag": "nobody-here"}, "no paper"),
        ("recommend", {"tag": rec["request"]["tag"], "method": "svm"}, "method"),
    ]:
        try:
            got = await session.call_tool(name, args)
        except Exception as e:  # an argument the input schema refuses is a protocol error
            text = str(e)
        else:
            check(got.is_error, f"{name} {args}: not an error: {got.structured_content}")
            text = " ".join(c.text for c in got.content if c.type == "text")
        check(reason in text.lower(), f"{name} {args}: error {text!r} does not say {reason!r}")
    got = await session.call_tool("search", {"query": 42})
    check(got.is_error, "search with a number for the query: not an error")

    # import (writes are open here: loopback without a key, or stdio) and
    # import_status, followed to the end.
    lib = ("@article{mcp1, title = {Tool use by assistants}, author = {Lovelace, Ada},\n"
           "  abstract = {Assistants call tools to search a library of papers.}, year = 2026}")
    got = await session.call_tool("import", {"source": "bibtex", "content": lib})
    check(not got.is_error, f"import failed: {got.content}")
    if not got.is_error:
        conforms("import", got)
        job = got.structured_content
        for _ in range(600):
            if job["status"] != "running":
                break
            await asyncio.sleep(0.1)
            status = await session.call_tool("import_status", {"id": job["id"]})
            check(not status.is_error, f"import_status failed: {status.content}")
            if status.is_error:
                break
            conforms("import_status", status)
            job = status.structured_content
        check(job["status"] == "done" and job["stored"] == 1, f"the import ended {job}")
    bad = await session.call_tool("import", {"source": "zotero", "content": "x"})
    said = " ".join(c.text for c in bad.content if c.type == "text")
    check(bad.is_error and "zotero" in said and "bibtex" in said,
          f"an import from an unknown source: {bad.content}")

    # A paper as a resource: JSON and BibTeX.
    templates = (await session.list_resource_templates()).resource_templates
    for uri in ("papersearch://papers/{+id}", "papersearch://collections/{tag}"):
        check(any(t.uri_template == uri for t in templates), f"resource templates {templates} lack {uri}")
    read = await session.read_resource(f"papersearch://papers/{want['id']}")
    kinds = {c.mime_type: c.text for c in read.contents}
    check(json.loads(kinds.get("application/json", "{}")) == want, f"resource JSON {kinds.get('application/json')!r}")
    check(kinds.get("application/x-bibtex", "").startswith("@"), f"resource BibTeX {kinds.get('application/x-bibtex')!r}")
    # An imported paper's id holds a colon (bibtex:mcp1): its resource is
    # read at the id as it is.
    read = await session.read_resource("papersearch://papers/bibtex:mcp1")
    check(any('"Tool use by assistants"' in c.text for c in read.contents), f"the imported paper's resource: {read.contents}")
    try:
        await session.read_resource("papersearch://papers/no-such-paper")
        failures.append("reading an unknown paper's resource succeeded")
    except Exception as e:
        check("not found" in str(e).lower(), f"unknown resource: {e}")


async def first_search(session, n):
    """An assistant's first question, right after initialize."""
    await session.initialize()
    got = await session.call_tool("search", {"query": "robots that learn manipulation from human videos", "limit": n})
    check(not got.is_error, f"the first search failed: {got.content}")
    if not got.is_error:
        results = got.structured_content["results"]
        check(len(results) == n, f"the first search found {len(results)} papers, want {n}: {got.structured_content}")


async def main():
    kind, target, arg = sys.argv[1:4]
    if kind == "fresh":
        run, kind = (lambda session: first_search(session, int(arg))), "stdio"
    else:
        with open(arg) as f:
            expected = json.load(f)
        run = lambda session: exercise(session, expected)
    if kind == "http":
        async with streamable_http_client(target) as (read, write):
            async with ClientSession(read, write) as session:
                await run(session)
    else:
        params = StdioServerParameters(command=target, args=["mcp"], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await run(session)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("ok")


asyncio.run(main())
