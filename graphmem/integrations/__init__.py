"""Integrations with agent frameworks, each an extra: ``graphmem[langgraph]`` (a LangGraph store),
``graphmem[langchain]`` (a retriever and a chat message history)."""
