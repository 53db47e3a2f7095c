"""The workspace folders the server has open: each one's store, watcher, settings, session listing
and change notifications."""
