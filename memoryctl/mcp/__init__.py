"""The agent face: the MCP server, what an agent may read and write, agent identities."""
