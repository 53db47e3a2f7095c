"""Bytes to JSON-RPC messages: stdin read in bounded memory, messages framed and checked, custom
methods' params decoded."""
