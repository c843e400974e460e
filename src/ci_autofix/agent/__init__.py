"""The fix-mode agent: Claude in the checkout, with sandboxed tools, budgets and prompt caching.

from ci_autofix.agent import AgentRequest, run_agent, build_client
result = run_agent(request, llm=build_client(settings), sandbox=sandbox)
"""

from ci_autofix.agent.llm import LLM, agent_available, build_client
from ci_autofix.agent.loop import run_agent
from ci_autofix.agent.model import AgentRequest, AgentResult, Confidence, UntrustedText
from ci_autofix.agent.pricing import Usage

__all__ = [
    "LLM",
    "AgentRequest",
    "AgentResult",
    "Confidence",
    "UntrustedText",
    "Usage",
    "agent_available",
    "build_client",
    "run_agent",
]
