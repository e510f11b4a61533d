"""A minimal agent harness: send a task to a model, pipe its reply into
`git agent-apply --json`, and hand the reflection back until the edits apply.

`ask_model(messages) -> str` is yours (any chat API). Run in the repository.
"""

import json
import subprocess


def apply(reply: str) -> dict:
    """Apply one reply; returns the JSON report (schema/report.v1.json)."""
    out = subprocess.run(["git", "agent-apply", "--json", "-"], input=reply, capture_output=True, text=True)
    return json.loads(out.stdout)


def edit_until_applied(ask_model, task: str, attempts: int = 3) -> dict:
    prompt = subprocess.run(["git", "agent-apply", "prompt", "editblock"], capture_output=True, text=True).stdout
    messages = [{"role": "system", "content": prompt}, {"role": "user", "content": task}]
    for _ in range(attempts):
        reply = ask_model(messages)
        report = apply(reply)
        if report["status"] in ("applied", "unchanged"):
            return report
        # Nothing was changed (or, under --partial, only what the reflection
        # says): the reflection tells the model exactly what to send again.
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": report["reflection"]}]
    return report
