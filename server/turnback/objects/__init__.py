"""Git's object model: content-addressed, immutable, compressed blobs and trees, loose or
in packs. A checkpoint is one tree; equal content is stored once."""
