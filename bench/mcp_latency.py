"""Row 8: a warm `apply` through the MCP server against the same apply
through a CLI process, alternating, in one repository.

Usage: mcp_latency.py BINARY RUNS (run with a Python that has the `mcp`
package). Each call makes a one-edit commit that flips `x = 1` and `x = 2`.
Prints {"mcp_s": [...], "cli_s": [...]} as JSON.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BINARY, RUNS = sys.argv[1], int(sys.argv[2])
ENV = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")


def reply(old, new):
    return f"app.py\n```\n<<<<<<< SEARCH\nx = {old}\n=======\nx = {new}\n>>>>>>> REPLACE\n```\n"


async def main():
    repo = tempfile.mkdtemp(prefix="bench-mcp-")
    with open(os.path.join(repo, "app.py"), "w") as f:
        f.write("def f():\n    pass\n\nx = 1\n")
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", "-C", repo, *cmd], check=True, env=ENV)
    value = 1
    mcp_s, cli_s = [], []
    server = StdioServerParameters(command=BINARY, args=["mcp", "--repo", repo], env=ENV)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for i in range(RUNS + 2):
                new = 3 - value
                t = time.perf_counter()
                result = await session.call_tool("apply", {"reply": reply(value, new)})
                elapsed = time.perf_counter() - t
                assert not result.is_error, result
                value = new
                if i >= 2:  # the first calls load the formats
                    mcp_s.append(elapsed)
                new = 3 - value
                t = time.perf_counter()
                subprocess.run([BINARY, "--repo", repo, "-"], input=reply(value, new).encode(), check=True,
                               env=ENV, stdout=subprocess.DEVNULL)
                elapsed = time.perf_counter() - t
                value = new
                if i >= 2:
                    cli_s.append(elapsed)
    print(json.dumps({"mcp_s": mcp_s, "cli_s": cli_s}))


asyncio.run(main())
