"""Work the server runs for its folders off the request path: the thread pools, the at-once short
write, preparing the next checkpoint, following agents, answering a CLI's hand-off."""
