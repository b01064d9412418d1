"""Runs τ²-bench tasks (retail or airline) through a running Parley and reports pass^k.

The domain's tools are exposed through the Parley Python SDK (a fresh τ² environment per trial, so the evaluator
reads the database the conversation changed); τ²'s own user simulator plays the customer over the widget protocol
(GET /widget/ws); τ²'s evaluator grades each trial; pass^k is τ-bench's: per task, C(successes, k) / C(trials, k),
averaged over the tasks. Parley's own model answers (configure `llm:` with a real model: the offline one cannot do
these tasks). README.md, "Testing your conversations" (the τ²-bench bridge).

    pip install -e sdk-python "tau2 @ git+https://github.com/sierra-research/tau2-bench"
    SERVICE_SDK_SECRET=… OPENAI_API_KEY=… python examples/tau2-bridge/tau2_bridge.py \\
        --url http://127.0.0.1:3000 --domain retail --trials 4 --k 1 2 4 --user-model gpt-4.1

`--dry-run` needs neither τ² nor Parley nor a network: it prints the plan (the functions Parley would be offered,
with their modes, the tasks and trials) for the domain, or for a domain described in a JSON file (`--domain-file`,
as tests do). The real run was written against τ²-bench's Python API (tau2.domains.<domain>.environment,
tau2.user.user_simulator, tau2.evaluator.evaluator) and has not been run here (no network on the build machine).
"""

from __future__ import annotations

import argparse
import json
import sys
from math import comb
from typing import Any

#: τ² tools that only read (offered at once); every other tool changes the database and waits for the customer's
#: confirmation in Parley (mode "write"), which the simulated customer answers like any question.
READ_PREFIXES = ("get_", "find_", "list_", "search_", "calculate", "think")


def mode_of(tool_name: str) -> str:
    return "read" if tool_name.startswith(READ_PREFIXES) else "write"


def plan(domain: str, tools: list[dict[str, Any]], task_ids: list[str], trials: int) -> dict[str, Any]:
    """What a run does: the functions (OpenAI-style tool schemas → Parley functions with modes), tasks × trials."""
    functions = []
    for t in tools:
        fn = t.get("function", t)
        functions.append({"name": fn["name"], "mode": mode_of(fn["name"]), "parameters": sorted(fn.get("parameters", {}).get("properties", {}))})
    return {"domain": domain, "functions": functions, "tasks": task_ids, "trials": trials, "conversations": len(task_ids) * trials}


def pass_hat_k(successes: dict[str, list[bool]], k: int) -> float:
    """τ-bench's pass^k: the chance that k trials of a task drawn from its n all pass, averaged over the tasks."""
    scores = []
    for runs in successes.values():
        n, c = len(runs), sum(runs)
        if n < k:
            raise ValueError(f"pass^{k} needs at least {k} trials per task (a task has {n})")
        scores.append(comb(c, k) / comb(n, k))
    return sum(scores) / len(scores) if scores else 0.0


def load_domain_file(path: str) -> tuple[list[dict[str, Any]], list[str]]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data["tools"], [str(t["id"]) for t in data["tasks"]]


def load_tau2(domain: str) -> tuple[Any, list[Any]]:
    """τ²'s environment factory and tasks for the domain (imported only for a real run or a τ² dry run)."""
    import importlib

    try:
        module = importlib.import_module(f"tau2.domains.{domain}.environment")
    except ImportError as err:
        raise SystemExit(f'tau2_bridge: τ²-bench is not installed ({err}): pip install "tau2 @ git+https://github.com/sierra-research/tau2-bench"')
    return module.get_environment, module.get_tasks()


async def run_trial(args: argparse.Namespace, get_environment: Any, task: Any, trial: int) -> bool:
    """One conversation: a fresh τ² environment behind the SDK, τ²'s user simulator on the widget, τ²'s evaluator."""
    import functools

    import websockets
    from parley import Client
    from tau2.data_model.message import AssistantMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.user.user_simulator import UserSimulator

    env = get_environment()
    if task.initial_state is not None:
        init = task.initial_state
        env.set_state(initialization_data=init.initialization_data, initialization_actions=init.initialization_actions, message_history=init.message_history or [])
    client = Client(url=args.url, secret=args.secret)
    for name, tool in env.tools.get_tools().items():
        client.tool(functools.wraps(tool._func)(tool._func), name=name, description=tool.short_desc or name, mode=mode_of(name))  # noqa: SLF001
    await client.start()
    user = UserSimulator(instructions=str(task.user_scenario), llm=args.user_model)
    state = user.get_init_state()
    messages: list[Any] = []
    async with websockets.connect(f"{args.url.replace('http', 'ws', 1)}/widget/ws") as ws:
        await ws.send(json.dumps({"type": "init", "customerId": f"tau2-{task.id}-{trial}", "email": f"tau2-{trial}@bridge.test"}))
        pending: str | None = None
        reply = AssistantMessage(role="assistant", content="Hi! How can I help you today?")
        for _ in range(args.max_turns):
            said, state = user.generate_next_message(reply, state)
            messages += [reply, said]
            if UserSimulator.is_stop(said):
                break
            text = said.content or ""
            if pending is not None:
                approve = text.strip().lower().startswith(("yes", "y ", "ok", "sure", "confirm", "please do"))
                await ws.send(json.dumps({"type": "confirm", "id": pending, "approve": approve}))
            else:
                await ws.send(json.dumps({"type": "message", "id": f"m{len(messages)}", "text": text}))
            reply, pending = await next_reply(ws)
    await client.close()
    run = SimulationRun(id=f"{task.id}-{trial}", task_id=task.id, messages=messages, termination_reason=TerminationReason.USER_STOP, start_time="", end_time="", duration=0)
    return evaluate_simulation(simulation=run, task=task, evaluation_type=EvaluationType.ALL, solo_mode=False, domain=args.domain).reward >= 1.0


async def next_reply(ws: Any) -> tuple[Any, str | None]:
    """The assistant's next message, or its confirmation card (asked as a question, with the card's id)."""
    from tau2.data_model.message import AssistantMessage

    while True:
        frame = json.loads(await ws.recv())
        if frame["type"] == "message":
            return AssistantMessage(role="assistant", content=frame["text"]), None
        if frame["type"] == "confirm":
            return AssistantMessage(role="assistant", content=f"{frame['summary']}? (yes / no)"), frame["id"]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description="τ²-bench tasks through Parley, with pass^k")
    p.add_argument("--domain", choices=["retail", "airline"], default="retail")
    p.add_argument("--domain-file", help="a JSON {tools, tasks} standing for the domain (dry runs)")
    p.add_argument("--tasks", type=int, default=0, help="run the first N tasks (0: all)")
    p.add_argument("--trials", type=int, default=4)
    p.add_argument("--k", type=int, nargs="+", default=[1])
    p.add_argument("--url", default="http://127.0.0.1:3000")
    p.add_argument("--secret", default="")
    p.add_argument("--user-model", default="gpt-4.1")
    p.add_argument("--max-turns", type=int, default=30)
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    if any(k < 1 or k > args.trials for k in args.k):
        p.error("each --k is between 1 and --trials")
    if args.domain_file:
        tools, task_ids = load_domain_file(args.domain_file)
        get_environment, tasks = None, []
    else:
        get_environment, tasks = load_tau2(args.domain)
        tools = [t.openai_schema for t in get_environment().tools.get_tools().values()]
        task_ids = [str(t.id) for t in tasks]
    if args.tasks:
        task_ids, tasks = task_ids[: args.tasks], tasks[: args.tasks]
    if args.dry_run:
        print(json.dumps(plan(args.domain, tools, task_ids, args.trials), indent=2))
        return 0
    if not args.secret or get_environment is None:
        p.error("a real run needs τ²-bench installed (no --domain-file) and --secret (Parley's service secret)")
    import asyncio

    successes = {str(t.id): [asyncio.run(run_trial(args, get_environment, t, i)) for i in range(args.trials)] for t in tasks}
    print(json.dumps({"domain": args.domain, "trials": args.trials, **{f"pass^{k}": round(pass_hat_k(successes, k), 4) for k in args.k}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
