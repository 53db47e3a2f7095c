"""The JSON-RPC contract: method names, params checked, errors and answers shaped, ``$/progress``
and cancellation."""
