"""The Turnback language server (pygls): the store over JSON-RPC on stdio."""
