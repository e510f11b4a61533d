"""A real MCP client (the `mcp` package's stdio client) driving
`git-agent-apply mcp` in a repository, as an agent harness would.

Usage: client.py BINARY REPO. Exits 0 when every step behaves; prints what
went wrong otherwise. The repository holds `app.py` with `def greet():`.
"""

import asyncio
import json
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

BINARY, REPO = sys.argv[1], sys.argv[2]


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], check=True, capture_output=True, text=True).stdout


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


def check(condition, what):
    if not condition:
        raise AssertionError(what)


REPLY = """Rename the greeting.

app.py
```python
<<<<<<< SEARCH
    return "hello"
=======
    return "hello, world"
>>>>>>> REPLACE
```
"""

FAILING = """app.py
```python
<<<<<<< SEARCH
    return "this line is not in the file"
=======
    return "x"
>>>>>>> REPLACE
```
"""


async def main():
    server = StdioServerParameters(command=BINARY, args=["mcp", "--repo", REPO])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            for name in ["apply", "read", "str_replace", "edit", "undo", "formats", "prompt"]:
                check(name in tools, f"tool {name} is listed: {sorted(tools)}")
            check("reply" in tools["apply"].input_schema["properties"], "apply's schema names `reply`")
            check(tools["apply"].input_schema.get("required") == ["reply"], "apply requires only `reply`")

            head = git("rev-parse", "HEAD").strip()
            result = await session.call_tool("apply", {"reply": REPLY})
            check(not result.is_error, f"apply succeeded: {text_of(result)}")
            report = result.structured_content
            check(report["status"] == "applied", f"report status applied: {report}")
            check(git("rev-parse", "HEAD~1").strip() == head, "one commit was made")
            check('"hello, world"' in git("show", "HEAD:app.py"), "the commit holds the edit")
            check(git("status", "--porcelain") == "", "the working tree is clean")

            result = await session.call_tool("read", {"path": "app.py", "view": "hashline", "lines": "1-2"})
            # The file tag (`app.py @7db182 (2 lines)`), then the `LINE:HASH|` lines.
            view = text_of(result).splitlines()
            check(not result.is_error and view[0].startswith("app.py @") and view[1].startswith("1:"),
                  f"read in hashline: {text_of(result)}")
            result = await session.call_tool("read", {"path": "app.py"})
            check('     2\t    return "hello, world"' in text_of(result), f"numbered read: {text_of(result)!r}")
            result = await session.call_tool("read", {"path": "../outside.txt"})
            check(result.is_error, "a path outside the repository is refused as a tool error")

            committed = git("rev-parse", "HEAD").strip()
            result = await session.call_tool("apply", {"reply": FAILING})
            check(result.is_error, "a failing reply is a tool error")
            check("Edit 1 to app.py failed" in text_of(result), f"the error text is the reflection: {text_of(result)}")
            check(git("rev-parse", "HEAD").strip() == committed, "a failing reply commits nothing")

            result = await session.call_tool(
                "str_replace", {"path": "app.py", "old_str": "def greet():", "new_str": "def greeting():"}
            )
            check(not result.is_error, f"str_replace applied: {text_of(result)}")
            check("def greeting():" in git("show", "HEAD:app.py"), "str_replace was committed")

            try:
                await session.call_tool("apply", {"reply": 42})
                check(False, "malformed arguments are a JSON-RPC error")
            except MCPError as error:
                check("invalid arguments" in str(error), f"the error says why: {error}")

            result = await session.call_tool("undo", {})
            check(not result.is_error, f"undo: {text_of(result)}")
            check("def greet():" in git("show", "HEAD:app.py"), "undo reverted the str_replace commit")

            result = await session.call_tool("formats", {})
            names = [row["name"] for row in result.structured_content["formats"]]
            check("apply-patch" in names and "tool-calls" in names, f"formats lists the built-ins: {names}")
    print("mcp client: every step passed")


asyncio.run(main())
