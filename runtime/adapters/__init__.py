"""Framework adapters: each tool call of an agent admitted through a governor (peakopt.runtime.governor).

- :mod:`peakopt.runtime.adapters.langgraph` (extra ``langgraph``): ``GovernedToolNode``, a drop-in
  for LangGraph's prebuilt ``ToolNode``, and ``governed_tool`` for any LangChain tool;
- :mod:`peakopt.runtime.adapters.agents` (extra ``agents``): ``governed_tool``,
  ``governed_tools`` and ``governed_agent`` for the OpenAI Agents SDK's function tools.

Each adapter module imports its framework, so this package imports neither: a user loads the one
they use (``pip install 'peakopt[langgraph]'``), and ``peakopt`` itself never does.
"""
